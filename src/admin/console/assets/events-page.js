// Events: a filterable, keyset-paginated table that follows the event stream and prepends newer events
// (polling instead where the stream cannot be used, e.g. behind a proxy that buffers it).
import { api, queryString } from './api.js';
import { bulkReplayCard } from './bulk-replay-card.js';
import { badge, clippedCopy, copyButton, dataTable, errorBox, every, formatClock, h, replace, tableRow, timeEl } from './dom.js';

const POLL_MS = 3000;
/** A stream whose `ready` message has not arrived by then is held back on the way: poll instead. */
const STREAM_SILENCE_MS = 5000;
/** Events arriving together are fetched with one list call. */
const REFRESH_DEBOUNCE_MS = 200;
const PAGE_SIZE = 50;

const TEXT_FILTERS = [
  ['event', 'Event', 'transfer:succeeded'],
  ['source', 'Source', 'checkout'],
  ['checkoutId', 'Checkout id', ''],
  ['email', 'Email', ''],
  ['walletAddress', 'Wallet', '0x…'],
  ['transferId', 'Transfer id', ''],
];
const CHOICE_FILTERS = [
  ['validation', 'Validation', ['valid', 'unrecognised', 'invalid']],
  ['deliveryState', 'Delivery state', ['pending', 'delivered', 'dead']],
  // held: stored, not routed until released (a body answered 422, or a pinned contract in quarantine mode).
  ['quarantine', 'Quarantine', ['held', 'released']],
];
const TIME_FILTERS = [
  ['receivedFrom', 'Received from'],
  ['receivedTo', 'Received to'],
];

const usd = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });

/** `result.totalPriceUsd`; blank for an event without one (another event name, or stored by an earlier version during an upgrade). */
function amountCell(e) {
  if (typeof e.totalPriceUsd !== 'number') return null;
  return h('span', { class: 'amount', text: usd.format(e.totalPriceUsd) });
}

const COLUMNS = [
  // The id every CLI command takes (`hookrelay events show <id>`).
  { label: 'ID', class: 'num', cell: (e) => h('span', { class: 'copyable' }, h('a', { href: `#/events/${e.id}`, class: 'mono event-id', text: String(e.id) }), copyButton(String(e.id), 'event id')) },
  { label: 'Received', cell: (e) => timeEl(e.receivedAt) },
  {
    label: 'Event',
    cell: (e) =>
      h(
        'span',
        {},
        h('a', { href: `#/events/${e.id}`, class: 'event-link', text: e.event }),
        e.edit ? [' ', h('span', { class: 'badge edited', title: `edited copy of event ${e.edit.editedFrom}`, text: `edited #${e.edit.editedFrom}` })] : null,
        e.quarantine ? [' ', h('span', { class: `badge quarantine-${e.quarantine}`, title: e.quarantine === 'held' ? 'stored, not routed until released' : 'released from quarantine', text: e.quarantine })] : null,
      ),
  },
  { label: 'Amount', class: 'num', cell: amountCell },
  { label: 'Source', cell: (e) => e.source },
  { label: 'Checkout', cell: (e) => clippedCopy(e.checkoutId, 'checkout id') },
  { label: 'Email', cell: (e) => (e.email ? h('span', { class: 'clip narrow', title: e.email, text: e.email }) : null) },
  { label: 'Wallet', cell: (e) => clippedCopy(e.walletAddress, 'wallet address') },
  { label: 'Transfer id', cell: (e) => clippedCopy(e.transferId, 'transfer id') },
  { label: 'Validation', cell: (e) => badge(e.validation) },
  { label: 'Copies', class: 'num', cell: (e) => String(e.receivedCount ?? 1) },
  { label: 'Forwarded', cell: forwardingCell },
];

/** Whether the event was forwarded: the state that matters most, its counts on hover. */
function forwardingCell(e) {
  const f = e.forwarding;
  if (!f || f.state === 'none') return h('span', { class: 'muted', text: 'no rule matched' });
  const counts = [['pending', f.pending], ['delivered', f.delivered], ['dead', f.dead]].filter(([, n]) => n > 0).map(([word, n]) => `${n} ${word}`).join(', ');
  const label = badge(f.state);
  label.title = counts;
  return h('span', { class: 'forwarding', dataset: { state: f.state } }, label, counts.includes(',') ? h('span', { class: 'muted', text: ` ${counts}` }) : null);
}

/** Filter values from the page URL → the API's query (times as unix ms). */
function apiQuery(query) {
  const out = {};
  for (const [name] of [...TEXT_FILTERS, ...CHOICE_FILTERS]) if (query.get(name)) out[name] = query.get(name);
  for (const [name] of TIME_FILTERS) {
    const value = query.get(name);
    const ms = value ? new Date(value).getTime() : NaN;
    if (!Number.isNaN(ms)) out[name] = ms;
  }
  return out;
}

function filterForm(query) {
  const field = (name, label, control) => h('div', { class: 'field' }, h('label', { for: `f-${name}`, text: label }), control);
  const form = h(
    'form',
    { class: 'filters', id: 'event-filters', role: 'search', 'aria-label': 'Filter events' },
    TEXT_FILTERS.map(([name, label, placeholder]) =>
      field(name, label, h('input', { id: `f-${name}`, name, type: 'search', value: query.get(name) ?? '', placeholder, autocomplete: 'off', spellcheck: 'false' })),
    ),
    TIME_FILTERS.map(([name, label]) => field(name, label, h('input', { id: `f-${name}`, name, type: 'datetime-local', step: 1, value: query.get(name) ?? '' }))),
    CHOICE_FILTERS.map(([name, label, options]) =>
      field(
        name,
        label,
        h('select', { id: `f-${name}`, name }, h('option', { value: '', text: 'any' }), options.map((option) => h('option', { value: option, text: option, selected: query.get(name) === option }))),
      ),
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Apply filters' }), h('a', { class: 'button secondary', href: '#/events', text: 'Clear' })),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (String(value).trim() !== '') params.set(name, String(value).trim());
    const search = params.toString();
    const target = `#/events${search ? `?${search}` : ''}`;
    if (window.location.hash === target) window.dispatchEvent(new HashChangeEvent('hashchange'));
    else window.location.hash = target;
  });
  return form;
}

export function renderEvents(view, query) {
  const filters = apiQuery(query);
  const filtered = Object.keys(filters).length > 0;
  const status = h('span', { class: 'muted', 'aria-live': 'polite' });
  const live = h('input', { type: 'checkbox', id: 'live', checked: true });
  const tableBox = h('div', { class: 'table-box' });
  const more = h('div', { class: 'more' });
  let newestId = 0;
  let tbody = null;
  const bulkReplay = bulkReplayCard(filters);

  view.append(
    h('div', { class: 'page-head' }, h('h1', { text: 'Events' }), h('div', { class: 'live' }, h('label', { class: 'check' }, live, ' Live'), status)),
    h('details', { class: 'card filter-card', open: filtered || window.innerWidth >= 720 }, h('summary', { text: filtered ? 'Filters (active)' : 'Filters' }), filterForm(query)),
    bulkReplay.section,
    h('section', { class: 'card flush', 'aria-label': 'Events' }, tableBox, more),
  );

  const showPage = (page, { first }) => {
    if (first) {
      if (page.items.length === 0) {
        replace(tableBox, h('p', { class: 'empty', text: filtered ? 'No events match these filters.' : 'No events received yet. They appear here as they arrive.' }));
        tbody = null;
      } else {
        const table = dataTable(COLUMNS, page.items, { rowProps: (e) => ({ dataset: { eventId: e.id } }) });
        replace(tableBox, table);
        tbody = table.tBodies[0];
      }
      newestId = page.items[0]?.id ?? newestId;
    } else {
      for (const item of page.items) tbody.append(tableRow(COLUMNS, item, (e) => ({ dataset: { eventId: e.id } })));
    }
    replace(
      more,
      page.nextCursor
        ? h('button', { type: 'button', class: 'secondary', text: 'Older events', on: { click: (event) => loadMore(event.currentTarget, page.nextCursor) } })
        : null,
    );
  };

  const loadMore = async (button, cursor) => {
    button.disabled = true;
    try {
      showPage(await api('/events', { query: { ...filters, limit: PAGE_SIZE, cursor } }), { first: false });
    } catch (err) {
      button.disabled = false;
      more.append(errorBox(err));
    }
  };

  const poll = async () => {
    if (!live.checked) return;
    const page = await api('/events', { query: { ...filters, limit: PAGE_SIZE } });
    const fresh = page.items.filter((e) => e.id > newestId);
    if (fresh.length > 0) {
      if (!tbody) {
        showPage(page, { first: true });
      } else {
        for (const item of fresh.reverse()) {
          const row = tableRow(COLUMNS, item, (e) => ({ dataset: { eventId: e.id }, class: 'fresh' }));
          tbody.prepend(row);
        }
        newestId = Math.max(newestId, ...fresh.map((e) => e.id));
      }
    }
    status.textContent = `updated ${formatClock()}`;
  };

  api('/events', { query: { ...filters, limit: PAGE_SIZE } })
    .then((page) => {
      showPage(page, { first: true });
      status.textContent = `updated ${formatClock()}`;
    })
    .catch((err) => replace(tableBox, errorBox(err)));

  live.addEventListener('change', () => {
    status.textContent = live.checked ? 'live' : 'paused';
  });
  const stopFollowing = follow(filters, poll, status);
  return () => {
    stopFollowing();
    bulkReplay.stop();
  };
}

/**
 * Calls `refresh` when events matching `filters` are stored: woken by the event stream (the list call then
 * brings each row's forwarding state), or every POLL_MS when the stream is refused or held back.
 * Returns the function that stops it.
 */
function follow(filters, refresh, status) {
  let source = null;
  let stopPolling = null;
  let silence = null;
  let pending = null;
  const fallBack = () => {
    clearTimeout(silence);
    source?.close();
    source = null;
    status.dataset.follow = 'polling';
    stopPolling ??= every(POLL_MS, refresh);
  };
  if (typeof EventSource === 'undefined') {
    fallBack();
  } else {
    // Same origin: the session cookie goes along; the token never appears in the URL.
    source = new EventSource(`/admin/api/events/stream${queryString(filters)}`);
    silence = setTimeout(fallBack, STREAM_SILENCE_MS);
    source.addEventListener('ready', () => {
      clearTimeout(silence);
      status.dataset.follow = 'stream';
    });
    source.addEventListener('event', () => {
      pending ??= setTimeout(() => {
        pending = null;
        refresh().catch(() => {}); // the next event or poll tries again
      }, REFRESH_DEBOUNCE_MS);
    });
    // A stream the server ends (restart, slow client) is reopened by the browser with Last-Event-ID;
    // one it refuses (too many streams, session gone) is closed for good.
    source.addEventListener('error', () => {
      if (source?.readyState === EventSource.CLOSED) fallBack();
    });
  }
  return () => {
    clearTimeout(silence);
    clearTimeout(pending);
    source?.close();
    stopPolling?.();
  };
}
