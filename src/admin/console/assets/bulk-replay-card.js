// Bulk replay from the events page: every event the filters select, through today's rules or the rules
// that routed each event when it arrived. A dry run counts what would be sent per rule, with a sample,
// and sends nothing. The job's progress shows as it runs.
import { api } from './api.js';
import { errorText, every, flash, h, replace } from './dom.js';
import { cancelJob, jobPanel, runningJob } from './job-panel.js';
import { routeSelect } from './replay-route.js';

const JOB_POLL_MS = 1000;

/** The job's summary: deliveries per rule, rules withheld, events whose original routing is unknown, a sample. */
function summaryView(summary) {
  const dry = summary.dryRun;
  const perRule = Object.entries(summary.perRule ?? {});
  const withheld = Object.entries(summary.withheld ?? {});
  return h(
    'div',
    { id: 'bulk-replay-summary' },
    h('p', { class: 'muted', text: dry ? `Dry run, route ${summary.route}: nothing was sent. Per rule, what would be:` : `Route ${summary.route}. Per rule:` }),
    perRule.length === 0
      ? h('p', { class: 'muted', text: dry ? 'No rule would send any of these events.' : 'No rule sent any of these events.' })
      : h('ul', { class: 'plan' }, perRule.map(([ruleId, count]) => h('li', { class: 'mono', text: `${ruleId}: ${count}` }))),
    withheld.map(([ruleId, count]) => h('p', { class: 'error', text: `${ruleId}: ${count} not sent (removed or disabled in today's rules, or not usable on this node)` })),
    summary.unknownRouting
      ? h('p', { class: 'error', text: `${summary.unknownRouting} event${summary.unknownRouting === 1 ? ' was' : 's were'} stored before rule sets were kept: the original routing is unknown, so ${summary.unknownRouting === 1 ? 'it was' : 'they were'} not replayed. Replay with route “current” for today's rules.` })
      : null,
    summary.sample?.length
      ? [h('h3', { text: 'Sample' }), h('ul', { class: 'plan' }, summary.sample.map((send) => h('li', { class: 'mono', text: `#${send.eventId} → ${send.ruleId} (${send.ruleSetHash}) ${send.destination}` })))]
      : null,
  );
}

/** The card, and the function that stops following its job when the page is left. */
export function bulkReplayCard(filters) {
  const filtered = Object.keys(filters).length > 0;
  const route = routeSelect('bulk-route', 'each event');
  const dryRun = h('input', { type: 'checkbox', id: 'bulk-dry-run', name: 'dryRun' });
  const jobBox = h('div', { id: 'bulk-job' });
  const start = h('button', { type: 'button', id: 'bulk-replay', text: filtered ? 'Replay the events these filters select' : 'Replay every stored event' });
  let watched = null;

  const show = (job, dry) => {
    watched = { job, dry };
    const title = `${dry ? 'Dry run of a bulk replay' : 'Bulk replay'} #${job.id}`;
    const onCancel = (running, button) => cancelJob(running, button, (answer) => show(answer, dry));
    const summary = job.state !== 'running' && job.summary ? summaryView(job.summary) : null;
    replace(jobBox, jobPanel(job, { title, label: 'Bulk replay progress', createdWord: dry ? 'deliveries it would queue' : 'deliveries queued', onCancel }, summary));
    start.disabled = job.state === 'running';
  };

  start.addEventListener('click', async () => {
    const dry = dryRun.checked;
    const which = filtered ? 'every event these filters select' : 'every stored event';
    const rules = route.value === 'original' ? 'the rules that routed each event when it arrived' : 'the rules as they are now';
    // A bulk action says what it will touch before it acts; a dry run touches nothing.
    if (!dry && !window.confirm(`Replay ${which} through ${rules}? Each matching rule gets a new delivery.`)) return;
    start.disabled = true;
    try {
      show(await api('/events/replay', { method: 'POST', body: { filter: filters, route: route.value, ...(dry && { dryRun: true }) } }), dry);
    } catch (err) {
      start.disabled = false;
      flash(errorText(err), 'error');
    }
  });

  const section = h(
    'details',
    { class: 'card filter-card', id: 'bulk-replay-card' },
    h('summary', { text: filtered ? 'Replay these events' : 'Replay events' }),
    h('p', { class: 'muted', text: `Queues new deliveries for ${filtered ? 'every event the filters select' : 'every stored event'}, oldest first. Tick dry run to see how many each rule would get, with a sample, before anything is sent.` }),
    h('div', { class: 'inline-form' }, h('label', { for: 'bulk-route', text: 'Route' }), route, h('label', { class: 'check' }, dryRun, ' dry run')),
    start,
    jobBox,
  );
  const stop = every(JOB_POLL_MS, async () => {
    if (watched?.job.state === 'running') show(await api(`/jobs/${watched.job.id}`), watched.dry);
  });
  // A bulk replay already running (started in another tab, by the CLI or on another node) shows here.
  runningJob('replay')
    .then((running) => {
      if (running && !watched) show(running, running.summary?.dryRun === true);
    })
    .catch(() => {}); // the card still works without it
  return { section, stop };
}
