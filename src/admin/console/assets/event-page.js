// Event detail: the stored event, its delivery timeline per rule, why each rule took it or not, and replay / resend / retry.
import { api } from './api.js';
import { deliveryWait } from './delivery-wait.js';
import { editReplayCard } from './edit-replay-card.js';
import { explainCard } from './explain-panel.js';
import { routeSelect } from './replay-route.js';
import { badge, card, copyButton, dash, dataTable, definitionList, errorBox, errorText, every, flash, h, replace, showResultIn, timeEl } from './dom.js';

const POLL_MS = 2000;

function prettyBody(event) {
  if (event.parsed !== undefined && event.parsed !== null) return JSON.stringify(event.parsed, null, 2);
  return event.body ?? '';
}

/** The answer, or why there was none: the request never left (`sent` false), or it got no answer. */
function attemptStatusText(attempt) {
  if (attempt.status !== null && attempt.status !== undefined) return `HTTP ${attempt.status}`;
  return attempt.sent === false ? 'not sent' : 'no response';
}

function attemptItem(attempt) {
  return h(
    'li',
    { class: `attempt attempt-${attempt.outcome}` },
    h(
      'div',
      { class: 'attempt-line' },
      h('strong', { text: `Attempt ${attempt.attempt}` }),
      badge(attempt.outcome),
      timeEl(attempt.startedAt),
      h('span', { text: attemptStatusText(attempt) }),
      h('span', { class: 'muted', text: `${attempt.durationMs} ms` }),
      h('span', { class: 'mono muted', text: attempt.urlOrigin }),
    ),
    attempt.errorCode || attempt.errorMessage ? h('p', { class: 'error', text: [attempt.errorCode, attempt.errorMessage].filter(Boolean).join(': ') }) : null,
    attempt.responseExcerpt ? h('pre', { class: 'excerpt', text: attempt.responseExcerpt }) : null,
  );
}

/** No attempt of this delivery reached its destination (none made, or its one attempt was refused before sending). */
export function neverSent(delivery) {
  return delivery.lastStatus === null && (delivery.attempts === 0 || (delivery.attempts === 1 && delivery.lastAttemptSent === false));
}

function deliveryBlock(delivery, onRetry) {
  const retry =
    delivery.state === 'dead'
      ? h('button', { type: 'button', class: 'small', text: 'Retry', dataset: { deliveryId: delivery.id }, on: { click: (event) => onRetry(delivery, event.currentTarget) } })
      : null;
  const paused = Boolean(delivery.pausedReason);
  return h(
    'article',
    { class: 'delivery', dataset: { deliveryId: delivery.id, state: delivery.state, paused: String(paused) } },
    h(
      'header',
      {},
      h('span', { class: 'mono', text: `#${delivery.id}` }),
      badge(paused ? 'paused' : delivery.state),
      h('span', { class: 'muted', text: `${delivery.origin} · ${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'} · created ` }),
      timeEl(delivery.createdAt),
      retry,
    ),
    // A paused delivery's next attempt time is only when the worker looks again, not a promise: say why instead.
    paused ? h('p', { class: 'paused-reason', text: `Paused: ${delivery.pausedReason}` }) : null,
    !paused && delivery.state === 'pending' ? deliveryWait(delivery) : null,
    delivery.deadReason ? h('p', { class: 'error', text: `${neverSent(delivery) ? 'Dead, never sent' : 'Dead'}: ${delivery.deadReason}` }) : null,
    (delivery.attemptLog ?? []).length > 0
      ? h('ol', { class: 'timeline' }, delivery.attemptLog.map(attemptItem))
      : h('p', { class: 'muted', text: 'No attempt yet.' }),
    (delivery.redrives ?? []).map((r) =>
      h('p', { class: 'muted redrive', dataset: { outageId: r.outageId } }, `${r.kind === 'probe' ? 'Redriven as a probe' : 'Redriven'} after outage #${r.outageId} of its destination `, timeEl(r.redrivenAt)),
    ),
  );
}

function deliveriesByRule(deliveries, onRetry) {
  if (deliveries.length === 0) return [h('p', { class: 'empty', text: 'No rule matched this event, so nothing was forwarded.' })];
  const groups = new Map();
  for (const delivery of deliveries) {
    if (!groups.has(delivery.ruleId)) groups.set(delivery.ruleId, []);
    groups.get(delivery.ruleId).push(delivery);
  }
  return [...groups].map(([ruleId, list]) =>
    h(
      'section',
      { class: 'rule-group', dataset: { ruleId } },
      h('h3', {}, 'Rule ', h('span', { class: 'mono', text: ruleId })),
      [...list].sort((a, b) => a.id - b.id).map((delivery) => deliveryBlock(delivery, onRetry)),
    ),
  );
}

/** What a replay sent (or, dry, would send) where, and the matching rules it withheld. */
function replayOutcome(result) {
  const count = result.deliveries?.length ?? 0;
  const summary = result.dryRun
    ? `Dry run through rule set ${result.ruleSetHash}: nothing was sent.`
    : count === 0
      ? 'No rule is sent for this event; nothing was queued.'
      : `Queued ${count} new deliver${count === 1 ? 'y' : 'ies'}.`;
  return [
    h('p', { class: result.dryRun ? 'muted' : 'ok', text: summary }),
    result.dryRun ? null : h('p', { class: 'muted', text: `Route ${result.route}, rule set ${result.ruleSetHash}.` }),
    result.planned.length > 0 ? h('ul', { class: 'plan' }, result.planned.map((send) => h('li', { class: 'mono', text: `${send.ruleId} → ${send.method} ${send.destination}` }))) : null,
    result.withheld.map((held) => h('p', { class: 'error', text: `Not sent: ${held.reason}` })),
  ];
}

function replayCard(eventId, ruleIds, refresh) {
  const out = h('div', { class: 'result', id: 'replay-result' });
  const ruleSelect = h('select', { id: 'replay-rule', name: 'ruleId' }, ruleIds.map((id) => h('option', { value: id, text: id })));
  const force = h('input', { type: 'checkbox', id: 'replay-force', name: 'force' });
  const route = routeSelect('replay-route', 'it');
  const dryRun = h('input', { type: 'checkbox', id: 'replay-dry-run', name: 'dryRun' });

  const replay = async (button, request) => {
    button.disabled = true;
    replace(out);
    const body = { ...request, route: route.value, ...(dryRun.checked && { dryRun: true }) };
    try {
      const result = await api(`/events/${eventId}/replay`, { method: 'POST', body });
      replace(out, replayOutcome(result));
      if (!result.dryRun) await refresh();
    } catch (err) {
      const hint = err.code === 'original_routing_unknown' ? 'Choose route “current” to replay it through the rules as they are now.' : err.status === 422 && !body.force ? 'Tick “even if it does not match” to send it anyway.' : null;
      replace(out, errorBox(err), hint ? h('p', { class: 'muted', text: hint }) : null);
    } finally {
      button.disabled = false;
    }
  };

  return card(
    'Replay',
    'Queues new deliveries of the stored bytes, through the rules as they are now or as they were when the event arrived. A dry run shows where they would go.',
    h('div', { class: 'inline-form' }, h('label', { for: 'replay-route', text: 'Route' }), route, h('label', { class: 'check' }, dryRun, ' dry run')),
    h('button', { type: 'button', id: 'replay-all', text: 'Replay to all matching rules', on: { click: (e) => replay(e.currentTarget, {}) } }),
    ruleIds.length > 0
      ? h(
          'div',
          { class: 'inline-form' },
          h('label', { for: 'replay-rule', text: 'One rule' }),
          ruleSelect,
          h('label', { class: 'check' }, force, ' even if it does not match'),
          h('button', { type: 'button', class: 'secondary', id: 'replay-one', text: 'Replay to this rule', on: { click: (e) => replay(e.currentTarget, { ruleId: ruleSelect.value, ...(force.checked && { force: true }) }) } }),
        )
      : null,
    out,
  );
}

/** What a check found wrong with the body, and for a held event the release (routes it once). */
function quarantineCard(event, refresh) {
  if (!event.issues && !event.quarantine) return null;
  const out = h('div', { class: 'result', id: 'release-result' });
  const force = h('input', { type: 'checkbox', id: 'release-force', name: 'force' });
  const release = async (button) => {
    button.disabled = true;
    replace(out);
    try {
      const result = await api(`/events/${event.id}/release`, { method: 'POST', body: { by: 'console', ...(force.checked && { force: true }) } });
      const n = result.deliveryIds.length;
      replace(out, h('p', { class: 'ok', text: `Released: ${n} deliver${n === 1 ? 'y' : 'ies'} queued.` }));
      await refresh();
    } catch (err) {
      const hint = err.code === 'release_refused' || err.code === 'transfer_stored_since' ? 'Tick “even though the checks fail” to release it anyway (recorded).' : null;
      replace(out, errorBox(err), hint ? h('p', { class: 'muted', text: hint }) : null);
      button.disabled = false;
    }
  };
  const source = event.issues?.from === 'contract' ? `pinned contract ${event.issues.contract}` : 'the event schema';
  const state = event.quarantine === 'held'
    ? 'Held in quarantine: stored, not routed until released.'
    : event.quarantine === 'released'
      ? `Released ${event.release ? `by ${event.release.releasedBy}${event.release.forced ? ' (forced)' : ''}` : ''}: routed once at its release.`
      : 'Forwarded as usual (the contract only warns).';
  return card(
    'Quarantine',
    state,
    event.issues ? h('p', { text: `Issues found by ${source}:` }) : null,
    event.issues ? h('ul', { id: 'quarantine-issues' }, event.issues.issues.map((issue) => h('li', { class: 'mono', text: `${issue.path}: ${issue.message}` }))) : null,
    event.quarantine === 'held'
      ? h(
          'div',
          { class: 'inline-form' },
          h('label', { class: 'check' }, force, ' even though the checks fail'),
          h('button', { type: 'button', id: 'release', text: 'Release', on: { click: (e) => release(e.currentTarget) } }),
        )
      : null,
    out,
  );
}

function resendCard(eventId) {
  const out = h('div', { class: 'result' });
  const url = h('input', { id: 'resend-url', name: 'url', type: 'url', required: true, placeholder: 'https://example.com/webhooks', autocomplete: 'off' });
  const mode = h(
    'select',
    { id: 'resend-mode', name: 'mode' },
    h('option', { value: 'original', text: 'original signature headers' }),
    h('option', { value: 'resign', text: 're-sign with a secret' }),
    h('option', { value: 'none', text: 'unsigned' }),
  );
  const scheme = h('select', { id: 'resend-scheme', name: 'scheme' }, h('option', { value: 'hmac-sha256-hex', text: 'hmac-sha256-hex' }), h('option', { value: 'standard-webhooks', text: 'standard-webhooks' }));
  const secret = h('input', { id: 'resend-secret', name: 'secret', type: 'password', autocomplete: 'off' });
  const resignFields = h('div', { class: 'row', hidden: true }, h('div', {}, h('label', { for: 'resend-scheme', text: 'Scheme' }), scheme), h('div', {}, h('label', { for: 'resend-secret', text: 'Secret' }), secret));
  mode.addEventListener('change', () => (resignFields.hidden = mode.value !== 'resign'));

  const form = h(
    'form',
    {},
    h('label', { for: 'resend-url', text: 'URL' }),
    url,
    h('label', { for: 'resend-mode', text: 'Signing' }),
    mode,
    resignFields,
    h('button', { type: 'submit', text: 'Resend' }),
    out,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector('button[type=submit]');
    const signing = mode.value === 'resign' ? { mode: 'resign', scheme: scheme.value, secret: secret.value } : { mode: mode.value };
    await showResultIn(out, button, 'Sending…', async () => {
      const result = await api(`/events/${eventId}/resend`, { method: 'POST', body: { url: url.value.trim(), signing } });
      return [
        definitionList([
          ['Status', result.status === null || result.status === undefined ? 'no response' : String(result.status)],
          ['Duration', `${result.durationMs} ms`],
          ['Error', dash(result.error)],
        ]),
        result.responseExcerpt ? h('pre', { class: 'excerpt', text: result.responseExcerpt }) : null,
      ];
    });
  });
  return card('Resend to a URL', 'Sends the exact stored bytes once, now, outside the rules (not recorded as a delivery).', form);
}

function factsOf(event) {
  return definitionList([
    ['Source', event.source],
    ['Transfer id', event.transferId ? h('span', { class: 'mono', text: event.transferId }) : '–'],
    ['Checkout id', event.checkoutId ? h('span', { class: 'mono', text: event.checkoutId }) : '–'],
    ['Email', event.email],
    ['Wallet', event.walletAddress ? h('span', { class: 'mono', text: event.walletAddress }) : '–'],
    ['Amount', typeof event.totalPriceUsd === 'number' ? `${event.totalPriceUsd} USD` : '–'],
    ['Validation', badge(event.validation)],
    ['Received', timeEl(event.receivedAt)],
    ['Times received', event.receivedCount > 1 ? h('span', {}, `${event.receivedCount} times, last `, timeEl(event.lastReceivedAt)) : 'once'],
    ['Size', `${event.bodyBytes} bytes`],
    ...(event.importedAt ? [['Imported', timeEl(event.importedAt)]] : []),
    ['Rule set', event.ruleSetHash ? h('span', { class: 'mono', text: event.ruleSetHash }) : 'unknown (stored before rule sets were kept)'],
    ...(event.edit
      ? [['Edited copy of', h('span', {}, h('a', { href: `#/events/${event.edit.editedFrom}`, id: 'edited-from', text: `#${event.edit.editedFrom}` }), ` (edit ${event.edit.number}, via ${event.edit.via}, `, timeEl(event.edit.editedAt), ')')]]
      : []),
  ]);
}

export function renderEventDetail(view, id) {
  const deliveriesBox = h('div', { id: 'deliveries' });
  let deliveries = [];

  const onRetry = async (delivery, button) => {
    button.disabled = true;
    try {
      await api(`/deliveries/${delivery.id}/retry`, { method: 'POST' });
      flash(`Delivery #${delivery.id} is due again.`);
      await refresh();
    } catch (err) {
      button.disabled = false;
      flash(errorText(err), 'error');
    }
  };

  const showDeliveries = (list) => {
    deliveries = list;
    replace(deliveriesBox, deliveriesByRule(list, onRetry));
  };

  const refresh = async () => {
    const detail = await api(`/events/${id}`);
    showDeliveries(detail.deliveries ?? []);
  };

  view.append(h('p', { class: 'back' }, h('a', { href: '#/events', text: '← Events' })), h('p', { class: 'muted', text: 'Loading…' }));

  Promise.all([api(`/events/${id}`), api('/rules').catch(() => ({ rules: [] }))])
    .then(([detail, rules]) => {
      const { event } = detail;
      const headerRows = Object.entries(event.headers ?? {}).sort(([a], [b]) => a.localeCompare(b));
      view.lastChild.remove();
      view.append(
        h('div', { class: 'page-head' }, h('h1', {}, event.event, ' ', h('span', { class: 'muted', text: `#${event.id}` }), ' ', copyButton(String(event.id), 'event id'))),
        h('div', { class: 'detail-grid' }, h('section', { class: 'card' }, h('h2', { text: 'Event' }), factsOf(event)), replayCard(id, (rules.rules ?? []).map((rule) => rule.id), refresh), resendCard(id)),
        quarantineCard(event, refresh),
        h('section', { class: 'card', 'aria-label': 'Deliveries' }, h('h2', { text: 'Deliveries' }), deliveriesBox),
        // What was received and why it went where it went come first; editing a copy is folded away below.
        explainCard(id),
        h('section', { class: 'card' }, h('h2', { text: 'Body' }), h('pre', { class: 'json', id: 'event-body', text: prettyBody(event) })),
        h(
          'section',
          { class: 'card' },
          h('h2', { text: 'Headers' }),
          dataTable(
            [
              { label: 'Name', cell: ([name]) => h('span', { class: 'mono', text: name }) },
              { label: 'Value', cell: ([, value]) => h('span', { class: 'mono', text: Array.isArray(value) ? value.join(', ') : String(value) }) },
            ],
            headerRows,
          ),
        ),
        editReplayCard(id, event.body ?? '', (rules.rules ?? []).map((rule) => rule.id), refresh),
      );
      showDeliveries(detail.deliveries ?? []);
    })
    .catch((err) => replace(view, h('p', { class: 'back' }, h('a', { href: '#/events', text: '← Events' })), errorBox(err)));

  // Keep the timeline current while something is still on its way.
  return every(POLL_MS, async () => {
    if (deliveries.some((delivery) => delivery.state === 'pending')) await refresh();
  });
}
