// Cluster: the live nodes sharing the database (role, version, rule set, last heartbeat), with a warning
// when their rule sets or versions differ, and the nodes that left or went missing in the last day.
// Refreshed every few seconds, like heartbeats.
import { api } from './api.js';
import { badge, card, dataTable, errorBox, every, h, replace, timeEl } from './dom.js';

const REFRESH_MS = 5_000;

const COLUMNS = [
  { label: 'Node', cell: (n) => h('span', { class: 'mono nowrap' }, n.id, n.self ? h('span', { class: 'muted', title: 'the node this console talks to', text: ' (this node)' }) : null) },
  { label: 'Host', cell: (n) => h('span', { class: 'mono', text: `${n.host} · pid ${n.pid}` }) },
  { label: 'Role', cell: (n) => badge(n.role) },
  { label: 'Version', cell: (n) => h('span', { class: 'mono', text: n.version }) },
  { label: 'Rule set', cell: (n) => h('span', { class: 'mono', text: n.ruleSetHash ?? '–' }) },
  { label: 'Started', cell: (n) => timeEl(n.startedAt) },
  { label: 'Last heartbeat', cell: (n) => timeEl(n.lastHeartbeat) },
];

const GONE_COLUMNS = [
  { label: 'Node', cell: (n) => h('span', { class: 'mono nowrap', text: n.id }) },
  { label: 'Host', cell: (n) => h('span', { class: 'mono', text: `${n.host} · pid ${n.pid}` }) },
  { label: 'Role', cell: (n) => badge(n.role) },
  { label: 'Version', cell: (n) => h('span', { class: 'mono', text: n.version }) },
  { label: 'Started', cell: (n) => timeEl(n.startedAt) },
  {
    label: 'Gone',
    cell: (n) => h('span', { class: `gone gone-${n.state}` }, badge(n.state === 'left' ? 'left' : 'missing'), ' ', n.state === 'left' ? 'left at ' : 'missing since ', timeEl(n.since)),
  },
];

function goneCard(gone) {
  if (!gone || gone.length === 0) return null;
  return card(
    `Gone in the last day (${gone.length})`,
    'Nodes no longer live. Left: stopped cleanly. Missing: stopped heartbeating without saying so (killed, crashed, or cut off from the database); its running jobs are marked failed, and deliveries it held go back to the other nodes when their leases run out.',
    dataTable(GONE_COLUMNS, gone, { rowProps: (n) => ({ dataset: { goneNodeId: n.id, state: n.state } }) }),
  );
}

function clusterContent(cluster) {
  return [
    ...cluster.warnings.map((warning) =>
      h('section', { class: 'card alert', role: 'alert', dataset: { warning: warning.code } }, h('h2', { text: warning.code === 'rule_sets_differ' ? 'Nodes run different rule sets' : 'Nodes run different versions' }), h('p', { text: warning.message })),
    ),
    card(
      `Live nodes (${cluster.nodes.length})`,
      'Every hookrelay serve sharing this database. A node records a heartbeat every few seconds and drops out after three missed ones; one that stops cleanly leaves at once.',
      cluster.nodes.length === 0 ? h('p', { class: 'empty', text: 'No live nodes.' }) : dataTable(COLUMNS, cluster.nodes, { rowProps: (n) => ({ dataset: { nodeId: n.id } }) }),
    ),
    goneCard(cluster.gone),
  ];
}

export function renderCluster(view) {
  view.append(h('div', { class: 'page-head' }, h('h1', { text: 'Cluster' })));
  const body = h('div', {}, h('p', { class: 'muted', text: 'Loading…' }));
  view.append(body);
  const load = async () => {
    try {
      replace(body, ...clusterContent(await api('/cluster')));
    } catch (err) {
      replace(body, errorBox(err));
    }
  };
  load();
  return every(REFRESH_MS, load);
}
