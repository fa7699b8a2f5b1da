// Dead letters: deliveries that gave up, one-by-one retry, and a bulk retry job with progress and cancel.
import { api } from './api.js';
import { neverSent } from './event-page.js';
import { badge, dataTable, errorBox, errorText, every, flash, h, replace, tableRow, timeEl } from './dom.js';
import { cancelJob, jobPanel, runningJob } from './job-panel.js';

const PAGE_SIZE = 50;
const JOB_POLL_MS = 1000;

/** What the destination last answered, or why there was no answer. */
function lastStatusText(d) {
  if (d.lastStatus) return `HTTP ${d.lastStatus}`;
  if (neverSent(d)) return 'never sent';
  return d.lastAttemptSent === false ? 'last attempt not sent' : 'no response';
}

/** What a bulk retry leaves alone, e.g. "4 of rule old-sink (no longer in the rule set: they would die again at once)". */
function skippedText(skipped) {
  const parts = (skipped ?? []).map((s) => `${s.count} of rule ${s.ruleId}`);
  return parts.length ? `Skipped: ${parts.join(', ')}, no longer in the rule set (a retry would be dead-lettered again at once; add the rule back or replay the events).` : '';
}

export function renderDeadLetters(view, query) {
  const ruleId = query.get('ruleId') ?? '';
  const tableBox = h('div', { class: 'table-box' });
  const more = h('div', { class: 'more' });
  const jobBox = h('div', { id: 'job' });
  const countLine = h('span', { class: 'muted' });
  let tbody = null;
  let shown = 0;
  let watchedJob = null;

  const retryOne = async (delivery, button) => {
    button.disabled = true;
    try {
      await api(`/deliveries/${delivery.id}/retry`, { method: 'POST' });
      button.closest('tr')?.classList.add('retried');
      replace(button.parentElement, badge('pending'));
      flash(`Delivery #${delivery.id} is due again.`);
    } catch (err) {
      button.disabled = false;
      flash(errorText(err), 'error');
    }
  };

  const columns = [
    { label: 'Delivery', cell: (d) => h('span', { class: 'mono', text: `#${d.id}` }) },
    { label: 'Event', cell: (d) => h('a', { href: `#/events/${d.eventId}`, text: `#${d.eventId}` }) },
    { label: 'Rule', cell: (d) => h('span', { class: 'mono', text: d.ruleId }) },
    { label: 'Attempts', class: 'num', cell: (d) => String(d.attempts) },
    { label: 'Last status', cell: lastStatusText },
    { label: 'Why', cell: (d) => h('span', { class: 'reason', text: d.deadReason ?? d.lastError ?? '–' }) },
    { label: 'Updated', cell: (d) => timeEl(d.updatedAt) },
    { label: '', class: 'act', cell: (d) => h('span', {}, h('button', { type: 'button', class: 'small secondary', text: 'Retry', on: { click: (e) => retryOne(d, e.currentTarget) } })) },
  ];

  const showPage = (page, first) => {
    if (first) {
      shown = 0;
      if (page.items.length === 0) {
        replace(tableBox, h('p', { class: 'empty', text: 'No dead letters. Every delivery either arrived or is still being tried.' }));
        tbody = null;
      } else {
        const table = dataTable(columns, page.items, { rowProps: (d) => ({ dataset: { deliveryId: d.id } }) });
        replace(tableBox, table);
        tbody = table.tBodies[0];
      }
    } else {
      for (const item of page.items) tbody.append(tableRow(columns, item, (d) => ({ dataset: { deliveryId: d.id } })));
    }
    shown += page.items.length;
    countLine.textContent = `${shown}${page.nextCursor ? '+' : ''} shown`;
    replace(
      more,
      page.nextCursor ? h('button', { type: 'button', class: 'secondary', text: 'Older dead letters', on: { click: (e) => loadPage(page.nextCursor, e.currentTarget) } }) : null,
    );
  };

  const loadPage = async (cursor, button) => {
    if (button) button.disabled = true;
    try {
      showPage(await api('/deliveries', { query: { state: 'dead', ruleId, limit: PAGE_SIZE, cursor } }), !cursor);
    } catch (err) {
      replace(cursor ? more : tableBox, errorBox(err));
    } finally {
      if (button) button.disabled = false;
    }
  };

  const showJob = (job, { started = false } = {}) => {
    const finished = job.state !== 'running' && (started || watchedJob?.state === 'running');
    watchedJob = job;
    const skipped = skippedText(job.summary?.skipped);
    replace(
      jobBox,
      jobPanel(
        job,
        { title: `Bulk retry #${job.id}`, label: 'Bulk retry progress', createdWord: 'retried', onCancel: (job, button) => cancelJob(job, button, showJob) },
        skipped ? h('p', { class: 'job-skipped muted', text: skipped }) : null,
      ),
    );
    retryAll.disabled = job.state === 'running';
    if (finished) loadPage();
  };

  const retryAll = h('button', {
    type: 'button',
    id: 'retry-all',
    text: ruleId ? `Retry all dead for ${ruleId}` : 'Retry all dead letters',
    on: {
      click: async () => {
        retryAll.disabled = true;
        try {
          // A bulk action says what it will touch before it acts.
          const { count, skipped } = await api('/deliveries/dead-count', { query: { ruleId } });
          const skippedLine = skippedText(skipped);
          if (count === 0) {
            retryAll.disabled = false;
            flash(`There are no dead letters to retry.${skippedLine ? ` ${skippedLine}` : ''}`);
            return;
          }
          const what = `${count} dead letter${count === 1 ? '' : 's'}${ruleId ? ` of rule ${ruleId}` : ''}`;
          if (!window.confirm(`Retry ${what}? Each becomes pending and due now.${skippedLine ? `\n${skippedLine}` : ''}`)) {
            retryAll.disabled = false;
            return;
          }
          showJob(await api('/deliveries/retry', { method: 'POST', body: { filter: ruleId ? { ruleId } : {} } }), { started: true });
        } catch (err) {
          retryAll.disabled = false;
          flash(errorText(err), 'error');
        }
      },
    },
  });

  const ruleFilter = h('select', { id: 'dead-rule', name: 'ruleId' }, h('option', { value: '', text: 'all rules' }));
  ruleFilter.addEventListener('change', () => {
    window.location.hash = ruleFilter.value ? `#/dead-letters?ruleId=${encodeURIComponent(ruleFilter.value)}` : '#/dead-letters';
  });

  view.append(
    h('div', { class: 'page-head' }, h('h1', { text: 'Dead letters' }), countLine),
    h(
      'section',
      { class: 'card toolbar' },
      h('div', { class: 'field' }, h('label', { for: 'dead-rule', text: 'Rule' }), ruleFilter),
      h('div', { class: 'field grow' }, h('p', { class: 'muted', text: 'Retry makes a dead delivery pending and due now; it keeps its attempt history.' })),
      h('div', { class: 'buttons' }, h('button', { type: 'button', class: 'secondary', text: 'Refresh', on: { click: (e) => loadPage(undefined, e.currentTarget) } }), retryAll),
    ),
    jobBox,
    h('section', { class: 'card flush', 'aria-label': 'Dead letters' }, tableBox, more),
  );

  api('/rules')
    .then((status) => {
      const ids = new Set((status.rules ?? []).map((rule) => rule.id));
      if (ruleId) ids.add(ruleId);
      for (const id of ids) ruleFilter.append(h('option', { value: id, text: id, selected: id === ruleId }));
    })
    .catch(() => {});
  // A bulk retry started earlier (or in another tab) keeps showing its progress.
  runningJob('retry')
    .then((running) => {
      if (running) showJob(running);
    })
    .catch(() => {});
  loadPage();

  return every(JOB_POLL_MS, async () => {
    if (watchedJob?.state === 'running') showJob(await api(`/jobs/${watchedJob.id}`));
  });
}
