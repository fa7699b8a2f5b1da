// A bulk job (replay or retry) as it runs: a progress bar, its counts, and Cancel while it runs.
import { badge, h, timeEl } from './dom.js';

/**
 * `title` heads the panel (`Bulk retry #7`), `label` names the progress bar, `createdWord` says what the
 * job's `created` counts; `extra` nodes follow the counts.
 */
export function jobPanel(job, { title, label, createdWord, onCancel }, ...extra) {
  const total = Math.max(job.total ?? 0, 0);
  const processed = Math.min(job.processed ?? 0, total || Infinity);
  const progress = h('progress', { id: 'job-progress', max: String(total || 1), value: String(total ? processed : job.state === 'running' ? 0 : 1) });
  progress.setAttribute('aria-label', label);
  return h(
    'section',
    { class: 'card job', dataset: { jobId: job.id, state: job.state } },
    h('div', { class: 'job-head' }, h('h2', { text: title }), badge(job.state)),
    progress,
    h(
      'p',
      { class: 'job-counts' },
      `${processed} of ${total} processed · ${job.created ?? 0} ${createdWord} · ${job.failed ?? 0} failed`,
      job.finishedAt ? h('span', { class: 'muted' }, ' · finished ', timeEl(job.finishedAt)) : null,
    ),
    job.error ? h('p', { class: 'error', text: job.error }) : null,
    job.state === 'running' ? h('button', { type: 'button', class: 'danger small', id: 'job-cancel', text: 'Cancel', on: { click: (e) => onCancel(job, e.currentTarget) } }) : null,
    extra,
  );
}
