// The explain panel of the event page: why each rule takes this event or not, clause by clause, and what
// a matching rule would send. Computed by the server from the rules loaded now; nothing is sent.
import { api } from './api.js';
import { badge, card, h, showResultIn } from './dom.js';

function preview(value) {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** `result.quantity $gte 5` and, apart, `found 2` / `absent`: the same words as the CLI. */
function clauseItem(clause) {
  const found = clause.absent ? 'absent' : clause.found === undefined ? null : `found ${preview(clause.found)}`;
  return h(
    'li',
    { class: `clause ${clause.pass ? 'clause-pass' : 'clause-fail'}`, dataset: { pass: String(clause.pass) } },
    h('span', { class: 'clause-mark', 'aria-label': clause.pass ? 'passes' : 'fails', text: clause.pass ? '✓' : '✗' }),
    clause.path !== undefined ? h('span', { class: 'mono clause-path', text: clause.path }) : null,
    h('span', { class: 'mono clause-operator', text: clause.operator }),
    clause.expected !== undefined ? h('span', { class: 'mono', text: preview(clause.expected) }) : null,
    found ? h('span', { class: clause.absent ? 'clause-found absent' : 'clause-found mono', text: found }) : null,
    clause.children?.length ? h('ul', { class: 'clauses' }, clause.children.map(clauseItem)) : null,
  );
}

function destinationLine(destination) {
  if (!destination) return null;
  if (!destination.checked) return h('p', { class: 'muted', text: `Destination not checked: ${destination.reason}` });
  if (!destination.allowed) return null; // said in the rule's notes
  return h('p', { class: 'muted', text: `The network guard allows the destination (${destination.addresses.join(', ')}).` });
}

function outgoingBlock(outgoing) {
  const head = [`${outgoing.method} ${outgoing.url}`, ...Object.entries(outgoing.headers).map(([name, value]) => `${name}: ${value}`)].join('\n');
  return h(
    'div',
    { class: 'explain-outgoing' },
    h('h4', { text: 'Would send (nothing is sent)' }),
    h('pre', { class: 'mono explain-request', text: head }),
    h('pre', { class: 'json explain-body', text: outgoing.body }),
  );
}

function verdictBadge(rule) {
  if (rule.matched) return badge('matches');
  return rule.enabled ? badge('no-match') : badge('disabled');
}

function ruleBlock(rule) {
  const failing = rule.failing.length;
  const refused = rule.destination?.checked && !rule.destination.allowed;
  return h(
    'details',
    { class: 'explain-rule', open: rule.matched || failing > 0, dataset: { ruleId: rule.ruleId, matched: String(rule.matched) } },
    h(
      'summary',
      {},
      h('span', { class: 'mono', text: rule.ruleId }),
      ' ',
      verdictBadge(rule),
      failing > 0 ? h('span', { class: 'muted', text: ` ${failing} failing clause${failing === 1 ? '' : 's'}` }) : null,
      refused ? h('span', { class: 'error', text: ' destination refused' }) : null,
      h('span', { class: 'muted', text: ` ${rule.file}:${rule.line}` }),
    ),
    rule.notes.map((note) => h('p', { class: refused || rule.outgoing?.deadReason ? 'error' : 'muted', text: note })),
    h('ul', { class: 'clauses' }, [rule.on, rule.source, ...rule.where].map(clauseItem)),
    rule.outgoing ? outgoingBlock(rule.outgoing) : null,
    destinationLine(rule.destination),
  );
}

function explanationView(explanation) {
  const matched = explanation.matchedRuleIds.length;
  return [
    h('p', {}, `${matched} of ${explanation.rules.length} rules match, with rule set `, h('span', { class: 'mono', text: explanation.ruleSetHash }), ' (loaded now).'),
    explanation.ruleSetNote ? h('p', { class: 'warning', role: 'note', text: explanation.ruleSetNote }) : null,
    explanation.rules.map(ruleBlock),
  ];
}

export function explainCard(eventId) {
  const out = h('div', { class: 'result', id: 'explain-result' });
  const button = h('button', { type: 'button', id: 'explain-run', text: 'Explain' });
  button.addEventListener('click', () => showResultIn(out, button, 'Explaining…', async () => explanationView(await api(`/events/${eventId}/explain`))));
  const section = card('Explain routing', 'Each rule loaded now, clause by clause with the values found in this event, and what a matching rule would send. Nothing is sent.', button, out);
  section.id = 'explain';
  return section;
}
