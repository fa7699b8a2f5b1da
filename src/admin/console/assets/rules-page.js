// Rules: which rule files are in use, why an edit was refused (file:line), per-rule counts, the
// destinations' current concurrency limits, blocked keys of ordered rules, dry-run.
import { api } from './api.js';
import { append, badge, card, clippedCopy, dataTable, definitionList, errorBox, h, replace, showResultIn, timeEl } from './dom.js';

/** Rule-file problems arrive as "file:line path: message" strings (or as objects with those parts). */
function problemText(problem) {
  if (typeof problem === 'string') return problem;
  if (problem && typeof problem === 'object' && 'file' in problem) {
    return `${problem.file}:${problem.line}${problem.path ? ` ${problem.path}` : ''}: ${problem.message}`;
  }
  return JSON.stringify(problem);
}

function problemList(problems, kind) {
  return h('ul', { class: `problems ${kind}` }, problems.map((problem) => h('li', { class: 'mono', text: problemText(problem) })));
}

function countLink(rule, state) {
  const count = rule.counts?.[state] ?? 0;
  if (state === 'dead' && count > 0) return h('a', { href: `#/dead-letters?ruleId=${encodeURIComponent(rule.id)}`, class: 'count dead', text: String(count) });
  return h('span', { class: `count ${count > 0 ? state : ''}`, text: String(count) });
}

const COLUMNS = [
  {
    label: 'Rule',
    cell: (r) => h('div', {}, h('strong', { class: 'mono', text: r.id }), r.description ? h('div', { class: 'muted', text: r.description }) : null),
  },
  // The file's name in the rules directory (the API names it so): the same on every node.
  { label: 'File', cell: (r) => h('span', { class: 'mono nowrap', text: `${r.file}:${r.line}` }) },
  { label: 'Enabled', cell: (r) => badge(r.enabled ? 'enabled' : 'disabled') },
  { label: 'On', cell: (r) => h('span', {}, (r.on ?? []).map((name) => h('code', { class: 'tag', text: name }))) },
  { label: 'Destination', cell: (r) => h('span', { class: 'mono clip wide', title: r.to?.url ?? '', text: r.to ? `${r.to.method} ${r.to.url}` : '–' }) },
  { label: 'Pending', class: 'num', cell: (r) => countLink(r, 'pending') },
  { label: 'Delivered', class: 'num', cell: (r) => countLink(r, 'delivered') },
  { label: 'Dead', class: 'num', cell: (r) => countLink(r, 'dead') },
];

const DESTINATION_COLUMNS = [
  { label: 'Destination', cell: (d) => h('span', { class: 'mono clip wide', text: d.destination }) },
  { label: 'Limit', class: 'num', cell: (d) => h('span', { class: 'nowrap', title: 'attempts in flight allowed now / ceiling', text: `${d.limit} / ${d.ceiling}` }) },
  { label: 'In flight', class: 'num', cell: (d) => String(d.inFlight) },
  { label: 'Circuit', cell: (d) => (d.pausedUntil ? h('span', {}, badge('paused'), ' until ', timeEl(d.pausedUntil)) : badge('closed')) },
];

/** This node's per-destination limits (they adapt to each destination's latency and errors). */
function destinationsCard(status) {
  if (!status) return null;
  const description = status.adaptive
    ? 'Attempts this node lets be in flight per destination now. The limit rises while a destination answers well and falls when it slows down or fails, up to the ceiling.'
    : 'Attempts this node lets be in flight per destination: fixed at the ceiling (delivery.adaptive is off).';
  return card(
    'Destinations',
    description,
    status.destinations.length === 0
      ? h('p', { class: 'empty', text: 'No attempts yet.' })
      : dataTable(DESTINATION_COLUMNS, status.destinations, { rowProps: (d) => ({ dataset: { destination: d.destination } }) }),
  );
}

const BLOCKED_KEY_COLUMNS = [
  { label: 'Key', cell: (k) => clippedCopy(k.key, 'order key') },
  { label: 'Head', cell: (k) => h('a', { href: `#/events/${k.head.eventId}`, text: `dlv_${k.head.deliveryId}` }) },
  { label: 'Attempts', class: 'num', cell: (k) => String(k.head.attempts) },
  { label: 'Last answer', cell: (k) => h('span', { class: 'mono', text: k.head.lastStatus !== null ? `HTTP ${k.head.lastStatus}` : k.head.lastError ?? '–' }) },
  { label: 'Blocked since', cell: (k) => h('span', {}, timeEl(k.head.blockedSince), k.overdue ? [' ', badge('overdue')] : null) },
  { label: 'Next attempt', cell: (k) => (k.head.nextAttemptAt ? timeEl(k.head.nextAttemptAt) : '–') },
  { label: 'Waiting', class: 'num', cell: (k) => String(k.waiting) },
];

/** Each ordered rule's blocked keys: the failing head of each key, and how many deliveries wait behind it. */
function blockedKeysCard(views) {
  if (views.length === 0) return null;
  return card(
    'Blocked keys',
    'Rules with order deliver one key at a time. A key is blocked while its oldest pending delivery keeps failing; the deliveries behind it wait, other keys flow.',
    views.map((view) =>
      h(
        'div',
        { class: 'blocked-keys', dataset: { ruleId: view.ruleId } },
        h('h3', {}, h('span', { class: 'mono', text: view.ruleId }), h('span', { class: 'muted', text: ` ordered by ${view.order.key}` })),
        view.blockedKeys.length === 0
          ? h('p', { class: 'empty', text: 'No key is blocked.' })
          : dataTable(BLOCKED_KEY_COLUMNS, view.blockedKeys, { rowProps: (k) => ({ dataset: { key: k.key } }) }),
      ),
    ),
  );
}

function bodyText(body) {
  if (body === undefined || body === null) return null;
  if (typeof body !== 'string') return JSON.stringify(body, null, 2);
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function dryRunResult(result) {
  return h(
    'article',
    { class: 'dry-run-result', dataset: { eventId: result.eventId, matched: String(result.matched) } },
    h(
      'header',
      {},
      h('a', { href: `#/events/${result.eventId}`, text: `Event #${result.eventId}` }),
      badge(result.matched ? 'matches' : 'no-match'),
      result.contentType ? h('span', { class: 'mono muted', text: result.contentType }) : null,
    ),
    result.reason ? h('p', { class: 'muted', text: result.reason }) : null,
    result.deadReason ? h('p', { class: 'error', text: result.deadReason }) : null,
    result.body !== undefined ? h('pre', { class: 'json', text: bodyText(result.body) }) : null,
  );
}

function dryRunCard(rules, query) {
  const out = h('div', { class: 'dry-run-results', 'aria-live': 'polite' });
  const ruleSelect = h('select', { id: 'dry-rule', name: 'ruleId' }, rules.map((rule) => h('option', { value: rule.id, text: rule.id, selected: rule.id === query.get('ruleId') })));
  const eventId = h('input', { id: 'dry-event', name: 'eventId', type: 'number', min: '1', step: '1', inputmode: 'numeric', value: query.get('eventId') ?? '', placeholder: 'e.g. 42' });
  const last = h('input', { id: 'dry-last', name: 'last', type: 'number', min: '1', max: '1000', step: '1', inputmode: 'numeric', placeholder: 'or the last N events' });

  const form = h(
    'form',
    { class: 'inline-form' },
    h('div', { class: 'field' }, h('label', { for: 'dry-rule', text: 'Rule' }), ruleSelect),
    h('div', { class: 'field' }, h('label', { for: 'dry-event', text: 'Event id' }), eventId),
    h('div', { class: 'field' }, h('label', { for: 'dry-last', text: 'Last N events' }), last),
    h('button', { type: 'submit', text: 'Dry run' }),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector('button');
    const body = eventId.value ? { eventId: Number(eventId.value) } : last.value ? { last: Number(last.value) } : null;
    if (!body) {
      replace(out, h('p', { class: 'error', text: 'Give an event id or a number of recent events.' }));
      return;
    }
    await showResultIn(out, button, 'Running…', async () => {
      const { results } = await api(`/rules/${encodeURIComponent(ruleSelect.value)}/dry-run`, { method: 'POST', body });
      return results.length === 0 ? h('p', { class: 'empty', text: 'No events to test.' }) : results.map(dryRunResult);
    });
  });
  return card('Dry run', 'Shows whether a rule matches stored events and the body it would send. Nothing is sent.', form, out);
}

export function renderRules(view, query) {
  view.append(h('div', { class: 'page-head' }, h('h1', { text: 'Rules' })), h('p', { class: 'muted', text: 'Loading…' }));
  Promise.all([api('/rules'), api('/destinations').catch(() => null)])
    .then(async ([status, destinations]) => {
      const ordered = (status.rules ?? []).filter((rule) => rule.order);
      const blocked = await Promise.all(ordered.map((rule) => api(`/rules/${encodeURIComponent(rule.id)}/blocked-keys`)));
      return [status, destinations, blocked];
    })
    .then(([status, destinations, blocked]) => {
      const rules = status.rules ?? [];
      const warnings = status.warnings ?? [];
      view.lastChild.remove();
      append(view, [
        status.lastError
          ? h(
              'section',
              { class: 'card alert', role: 'alert' },
              h('h2', {}, 'The last edit was refused ', h('span', { class: 'muted' }, '(', timeEl(status.lastError.at), ')')),
              h('p', { text: 'The rules below are still in use. Fix these and save again:' }),
              problemList(status.lastError.errors ?? [], 'errors'),
            )
          : null,
        h(
          'section',
          { class: 'card' },
          h('h2', { text: 'In use' }),
          definitionList([
            ['Rule set', h('span', { class: 'mono', text: status.hash })],
            ['Loaded', timeEl(status.loadedAt)],
            ['Rules', String(rules.length)],
            ['Status', status.lastError ? badge('error') : badge('ok')],
          ]),
          warnings.length > 0 ? [h('h3', { text: 'Warnings' }), problemList(warnings, 'warnings')] : null,
        ),
        h(
          'section',
          { class: 'card flush', 'aria-label': 'Rules' },
          rules.length === 0
            ? h('p', { class: 'empty', text: 'No rules: events are stored but not forwarded. Add YAML files to the rules directory.' })
            : dataTable(COLUMNS, rules, { rowProps: (r) => ({ dataset: { ruleId: r.id } }) }),
        ),
        destinationsCard(destinations),
        blockedKeysCard(blocked),
        rules.length > 0 ? dryRunCard(rules, query) : null,
      ]);
    })
    .catch((err) => replace(view, h('div', { class: 'page-head' }, h('h1', { text: 'Rules' })), errorBox(err)));
  return null;
}
