// Edit and replay: edit the body as JSON, checked against the event schema as you type, see what changed
// from the stored original, then send the edit (stored as a copy linked to this event) through the rules,
// one rule (even if its filter does not match) or to a URL. The original is never changed.
import { api } from './api.js';
import { errorBox, h, replace } from './dom.js';

const CHECK_DELAY_MS = 300;
const MAX_EDITOR_ROWS = 30;

/** The stored body indented for editing; a body that is not JSON is shown as it is. */
function indented(raw) {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

function changeLine(change) {
  const text = (value) => JSON.stringify(value);
  const path = change.path || '(whole body)';
  if (change.change === 'added') return h('li', { class: 'diff-added', text: `+ ${path}: ${text(change.after)}` });
  if (change.change === 'removed') return h('li', { class: 'diff-removed', text: `− ${path}: ${text(change.before)}` });
  return h('li', { class: 'diff-changed', text: `~ ${path}: ${text(change.before)} → ${text(change.after)}` });
}

function planLines(answer) {
  return [
    answer.appliedWithoutMatch ? h('p', { class: 'muted', text: `The rule's filter does not match the edited body (${answer.appliedWithoutMatch}): it is applied anyway.` }) : null,
    answer.planned.length === 0
      ? h('p', { class: 'muted', text: 'No rule matches the edited body: nothing would be sent.' })
      : h('ul', { class: 'plan' }, answer.planned.map((send) => h('li', { class: 'mono', text: `${send.ruleId} → ${send.method} ${send.destination}` }))),
  ];
}

/**
 * `originalText`: the stored bytes as text. The editor shows them indented; a body left as shown is sent as
 * the stored bytes, not as the indented text, so an unedited replay is byte for byte the original.
 */
export function editReplayCard(eventId, originalText, ruleIds, refresh) {
  const shown = indented(originalText);
  const rows = Math.min(MAX_EDITOR_ROWS, Math.max(8, shown.split('\n').length));
  const editor = h('textarea', { id: 'edit-body', name: 'body', rows, spellcheck: 'false', class: 'mono', value: shown });
  const exactness = h('p', { id: 'edit-exact', class: 'muted', 'aria-live': 'polite' });
  const check = h('div', { id: 'edit-check', class: 'result', 'aria-live': 'polite' });
  const diff = h('div', { id: 'edit-diff' });
  const out = h('div', { id: 'edit-result', class: 'result' });
  const meantInvalid = h('input', { type: 'checkbox', id: 'edit-meant-invalid', name: 'meantInvalid' });
  const target = h(
    'select',
    { id: 'edit-target', name: 'target' },
    h('option', { value: 'rules', text: 'through the current rules' }),
    ruleIds.map((id) => h('option', { value: `rule:${id}`, text: `through rule ${id} (even if it does not match)` })),
    h('option', { value: 'url', text: 'to a URL' }),
  );
  const url = h('input', { id: 'edit-url', name: 'url', type: 'url', placeholder: 'https://example.com/webhooks', autocomplete: 'off', hidden: true });
  const send = h('button', { type: 'button', id: 'edit-send', text: 'Send edited copy', disabled: true });
  let schemaFails = false;
  let checking = 0;

  const unedited = () => editor.value === shown;
  const showExactness = () => {
    exactness.textContent = unedited()
      ? `Unedited: the stored ${new TextEncoder().encode(originalText).length} bytes are sent exactly as received; indentation is only for reading.`
      : 'Edited: the text above is stored and sent as it is, indentation included.';
  };

  const request = (dryRun) => {
    const text = unedited() ? originalText : editor.value;
    const body = { body: text, via: 'console', ...(dryRun && { dryRun: true }), ...(meantInvalid.checked && { meantInvalid: true }) };
    if (target.value === 'url') body.to = url.value.trim();
    else if (target.value.startsWith('rule:')) body.ruleId = target.value.slice('rule:'.length);
    return body;
  };

  const updateSend = () => {
    send.disabled = checking !== 0 || editor.dataset.state === 'not-json' || (schemaFails && !meantInvalid.checked) || (target.value === 'url' && !url.value.trim());
  };

  // Checked on the server, by the same schema as webhooks: nothing is stored or sent by a check.
  const runCheck = async () => {
    try {
      JSON.parse(editor.value);
    } catch (err) {
      editor.dataset.state = 'not-json';
      replace(check, h('p', { class: 'error', text: `Not JSON: ${err.message}` }));
      replace(diff);
      updateSend();
      return;
    }
    const run = ++checking;
    updateSend();
    try {
      const answer = await api(`/events/${eventId}/edited-replay`, { method: 'POST', body: request(true) });
      if (run !== checking) return;
      schemaFails = answer.issues.length > 0;
      editor.dataset.state = schemaFails ? 'invalid' : 'valid';
      replace(
        check,
        schemaFails
          ? [h('p', { class: 'error', text: `Fails the event schema (${answer.issues.length} issue${answer.issues.length === 1 ? '' : 's'}). Tick “meant to be invalid” to send it anyway.` }), h('ul', {}, answer.issues.map((i) => h('li', { class: 'mono', text: `${i.path}: ${i.message}` })))]
          : h('p', { class: 'ok', text: 'Valid against the event schema.' }),
        planLines(answer),
      );
      replace(diff, answer.changes.length === 0 ? h('p', { class: 'muted', text: 'No change from the stored original.' }) : h('ul', { class: 'diff mono' }, answer.changes.map(changeLine)));
    } catch (err) {
      if (run === checking) replace(check, errorBox(err));
    } finally {
      if (run === checking) checking = 0;
      updateSend();
    }
  };

  let timer = null;
  const scheduleCheck = () => {
    clearTimeout(timer);
    timer = setTimeout(runCheck, CHECK_DELAY_MS);
  };
  editor.addEventListener('input', () => {
    showExactness();
    scheduleCheck();
  });
  meantInvalid.addEventListener('change', updateSend);
  url.addEventListener('input', scheduleCheck);
  target.addEventListener('change', () => {
    url.hidden = target.value !== 'url';
    scheduleCheck();
  });
  send.addEventListener('click', async () => {
    send.disabled = true;
    replace(out, h('p', { class: 'muted', text: 'Sending…' }));
    try {
      const answer = await api(`/events/${eventId}/edited-replay`, { method: 'POST', body: request(false) });
      const copy = answer.event;
      replace(
        out,
        h('p', { class: 'ok' }, `Stored as event `, h('a', { href: `#/events/${copy.id}`, id: 'edit-copy-link', text: `#${copy.id}` }), ` (edit ${copy.edit.number} of this event); ${answer.deliveries.length} deliver${answer.deliveries.length === 1 ? 'y' : 'ies'} queued.`),
        planLines(answer),
      );
      await refresh();
    } catch (err) {
      replace(out, errorBox(err));
    } finally {
      updateSend();
    }
  });
  showExactness();

  // Folded by default under the event's body: the first check runs when it is opened.
  const section = h(
    'details',
    { class: 'card', id: 'edit-replay' },
    h('summary', { text: 'Edit and replay' }),
    h('p', { class: 'muted', text: 'Edit the body, see what changed, and send the edit. It is stored as a new event linked to this one, which stays as received; it is signed by the rule, never with the original signature.' }),
    h('label', { for: 'edit-body', text: 'Body (JSON)' }),
    editor,
    exactness,
    check,
    h('h3', { text: 'Changes from the original' }),
    diff,
    h('div', { class: 'inline-form' }, h('label', { for: 'edit-target', text: 'Send' }), target, url),
    h('label', { class: 'check' }, meantInvalid, ' meant to be invalid (stored marked invalid)'),
    send,
    out,
  );
  section.addEventListener('toggle', () => {
    if (section.open && !editor.dataset.state) runCheck();
  });
  return section;
}
