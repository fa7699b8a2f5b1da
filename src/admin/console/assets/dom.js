// DOM helpers. Everything shown comes from the API, and event bodies are written by whoever sent the
// webhook, so text only ever goes in through textContent / text nodes, never through innerHTML.

/**
 * h('a', { href: '#/x', class: 'link', on: { click } }, 'text', child) → element.
 * Props: `class`, `text`, `on` (event listeners), `dataset`, boolean/property names (`hidden`, `disabled`,
 * `checked`, `value`), anything else becomes an attribute. Children: nodes, strings, numbers, arrays; null/false skipped.
 */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = String(value);
    else if (key === 'on') for (const [type, listener] of Object.entries(value)) node.addEventListener(type, listener);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'hidden' || key === 'disabled' || key === 'checked' || key === 'value' || key === 'selected') node[key] = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replaces the children of `node`. */
export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

const dateTime = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dateTimeWithYear = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });

/** ISO string (or ms) → local date and time; '–' when absent. */
export function formatTime(value) {
  if (value === null || value === undefined || value === '') return '–';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return (date.getFullYear() === new Date().getFullYear() ? dateTime : dateTimeWithYear).format(date);
}

export function formatClock(date = new Date()) {
  return timeOnly.format(date);
}

/** A <time> element with the local time as text and the exact ISO value as its datetime/title. */
export function timeEl(value) {
  if (value === null || value === undefined || value === '') return h('span', { class: 'muted', text: '–' });
  const iso = new Date(value).toISOString();
  return h('time', { datetime: iso, title: iso, text: formatTime(value) });
}

export function dash(value) {
  return value === null || value === undefined || value === '' ? '–' : String(value);
}

/** A small coloured label for a state (pending, delivered, dead, valid, unrecognised, running, …). */
export function badge(state) {
  return h('span', { class: `badge badge-${String(state).replace(/[^a-z-]/g, '')}`, text: state });
}

/** <dl> from [label, value] pairs; values may be nodes or text. */
export function definitionList(pairs) {
  return h('dl', { class: 'facts' }, pairs.map(([label, value]) => [h('dt', { text: label }), h('dd', {}, value instanceof Node ? value : dash(value))]));
}

/**
 * A table that turns into stacked cards on narrow screens (each cell shows its column name).
 * columns: [{ label, cell(row) → node|text, class? }]
 */
export function dataTable(columns, rows, { rowProps } = {}) {
  const head = h('thead', {}, h('tr', {}, columns.map((column) => h('th', { scope: 'col', class: column.class, text: column.label }))));
  const body = h('tbody');
  for (const row of rows) body.append(tableRow(columns, row, rowProps));
  return h('table', { class: 'data' }, head, body);
}

export function tableRow(columns, row, rowProps) {
  return h(
    'tr',
    rowProps ? rowProps(row) : {},
    columns.map((column) => {
      const value = column.cell(row);
      return h('td', { class: column.class, dataset: { label: column.label } }, value instanceof Node ? value : dash(value));
    }),
  );
}

/** Shows a short message under the top bar (kind: 'ok' | 'error'). */
export function flash(message, kind = 'ok') {
  const box = document.getElementById('flash');
  if (!box) return;
  box.textContent = message;
  box.className = `flash flash-${kind}`;
  box.hidden = false;
  clearTimeout(flash.timer);
  flash.timer = setTimeout(() => (box.hidden = true), kind === 'error' ? 10_000 : 5_000);
}

/** An inline error paragraph for a failed API call. */
export function errorBox(err) {
  return h('p', { class: 'error', role: 'alert', text: errorText(err) });
}

export function errorText(err) {
  const issues = err?.details?.issues;
  const extra = Array.isArray(issues) && issues.length > 0 ? ` (${issues.map((i) => `${(Array.isArray(i.path) ? i.path.join('.') : i.path) || 'body'}: ${i.message}`).join('; ')})` : '';
  return `${err?.message ?? String(err)}${extra}`;
}

/** Runs `fn` every `ms` while the tab is visible; returns a stop function. */
export function every(ms, fn) {
  let stopped = false;
  let timer;
  const tick = async () => {
    if (stopped) return;
    if (document.visibilityState === 'visible') {
      try {
        await fn();
      } catch {
        // the next tick tries again; pages show their own errors
      }
    }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** A titled card: heading, one muted line that says what it does, then its content. */
export function card(title, description, ...children) {
  return h('section', { class: 'card' }, h('h2', { text: title }), h('p', { class: 'muted', text: description }), ...children);
}

/**
 * Runs a form's action with its button disabled and `busyText` in `out`; what the action returns (nodes,
 * arrays of nodes) then fills `out`, and a failure shows as an error box there.
 */
export async function showResultIn(out, button, busyText, action) {
  button.disabled = true;
  replace(out, h('p', { class: 'muted', text: busyText }));
  try {
    replace(out, await action());
  } catch (err) {
    replace(out, errorBox(err));
  } finally {
    button.disabled = false;
  }
}

const COPIED_MS = 1500;

/** Puts `value` on the clipboard: the Clipboard API where the page may use it, else a selected hidden field. */
async function writeClipboard(value) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(value);
    return;
  }
  const field = h('textarea', { value, readonly: true, class: 'offscreen', 'aria-hidden': 'true' });
  document.body.append(field);
  field.select();
  try {
    if (!document.execCommand('copy')) throw new Error('The browser refused to copy.');
  } finally {
    field.remove();
  }
}

/**
 * A small icon button that copies `value` (an id a CLI command takes) and shows a tick for a moment
 * (`data-copied`: `yes`, or `no` when the browser refused). Icon only: lists have many columns.
 */
export function copyButton(value, what = 'value') {
  const button = h('button', { type: 'button', class: 'copy', title: `Copy ${what}: ${value}`, 'aria-label': `Copy ${what}`, dataset: { copy: value } });
  button.addEventListener('click', async (event) => {
    event.preventDefault();
    event.stopPropagation();
    try {
      await writeClipboard(String(value));
      button.dataset.copied = 'yes';
    } catch {
      button.dataset.copied = 'no';
      flash(`Could not copy: select the ${what} and copy it by hand.`, 'error');
    }
    clearTimeout(button.timer);
    button.timer = setTimeout(() => delete button.dataset.copied, COPIED_MS);
  });
  return button;
}

/** A value cut to fit its column (the whole of it on hover) with a button that copies the whole value. */
export function clippedCopy(value, what, { mono = true, wide = false } = {}) {
  if (value === null || value === undefined || value === '') return null;
  const text = String(value);
  return h('span', { class: 'copyable' }, h('span', { class: `${mono ? 'mono ' : ''}clip${wide ? ' wide' : ''}`, title: text, text }), copyButton(text, what));
}
