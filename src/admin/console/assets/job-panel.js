// A bulk job (replay or retry) as it runs: a progress bar, its counts, and Cancel while it runs.
import { api } from './api.js';
import { badge, errorText, flash, h, timeEl } from './dom.js';

/** The running job of this kind, if any: started earlier, in another tab, by the CLI or on another node. */
export async function runningJob(kind) {
  const jobs = await api('/jobs');
  const list = Array.isArray(jobs) ? jobs : (jobs?.items ?? []);
  return list.find((job) => job.kind === kind && job.state === 'running') ?? null;
}

/** Cancels the job from its panel's button and shows the answer; the button comes back if that fails. */
export async function cancelJob(job, button, show) {
  button.disabled = true;
  try {
    show(await api(`/jobs/${job.id}/cancel`, { method: 'POST' }));
  } catch (err) {
    button.disabled = false;
    flash(errorText(err), 'error');
  }
}

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
