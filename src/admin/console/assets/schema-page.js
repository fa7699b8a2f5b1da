// Schema: the drifts of the senders' body shape (each with a link to the first event that showed it), then
// the observed schema of each (source, event name): every field with its types, presence and an example,
// and how it compares with the schema hookrelay validates with. Refreshed every few seconds.
import { api } from './api.js';
import { badge, card, dataTable, errorBox, every, h, replace, showResultIn, timeEl } from './dom.js';

const REFRESH_MS = 5_000;

const types = (list) => (list.length > 0 ? list.join(' | ') : '–');

const DRIFT_COLUMNS = [
  { label: 'Detected', cell: (d) => timeEl(d.detectedAt) },
  { label: 'Event name', cell: (d) => h('span', { class: 'mono', text: `${d.source} ${d.event}` }) },
  { label: 'Drift', cell: (d) => badge(d.kind.replace('_', ' ')) },
  { label: 'Field', cell: (d) => h('span', { class: 'mono', text: d.path || '–' }) },
  { label: 'Types', cell: (d) => h('span', { class: 'mono', text: `${types(d.before)} → ${types(d.after)}` }) },
  { label: 'First event', cell: (d) => h('a', { href: `#/events/${d.eventId}`, text: `#${d.eventId}` }) },
  {
    label: 'Rules',
    cell: (d) => h('span', { class: 'mono', text: [...d.rules.where, ...d.rules.transform.map((id) => `${id} (transform, maybe)`)].join(', ') || '–' }),
  },
];

const FIELD_COLUMNS = [
  { label: 'Path', cell: (f) => h('span', { class: 'mono', text: f.path }) },
  { label: 'Types', cell: (f) => h('span', { class: 'mono', text: Object.entries(f.types).map(([t, n]) => `${t} ${n}`).join(', ') }) },
  { label: 'Present', cell: (f) => `${f.present} (${Math.round(f.share * 1000) / 10}%)` },
  { label: 'First seen', cell: (f) => timeEl(f.firstSeen) },
  { label: 'Last seen', cell: (f) => timeEl(f.lastSeen) },
  { label: 'Example', cell: (f) => h('span', { class: 'mono', text: f.example ?? '–' }) },
  { label: 'Spec', cell: (f) => (f.spec === 'as_spec' ? '' : badge(f.spec.replaceAll('_', ' '))) },
];

function schemaCard(schema) {
  const note = schema.spec === 'envelope' ? ' An event name the spec does not list: compared with the envelope only.' : '';
  return card(
    `${schema.source} ${schema.event}`,
    `${schema.eventsSeen} events learned, the first ${new Date(schema.firstSeen).toLocaleString()}, the last ${new Date(schema.lastSeen).toLocaleString()}.${schema.truncated > 0 ? ` ${schema.truncated} path sightings beyond the field cap were not kept.` : ''}${note}`,
    dataTable(FIELD_COLUMNS, schema.fields, { rowProps: (f) => ({ dataset: { path: f.path } }) }),
    schema.specNotObserved.length > 0 ? h('p', { class: 'muted', text: `In the spec, never observed: ${schema.specNotObserved.map((f) => f.path).join(', ')}` }) : null,
  );
}

function backfillCard() {
  const out = h('div', {});
  const button = h('button', { type: 'button', class: 'secondary', text: 'Learn from stored events' });
  button.addEventListener('click', () =>
    showResultIn(out, button, 'Starting…', async () => {
      const job = await api('/schema/backfill', { method: 'POST' });
      return h('p', { text: `Backfill job ${job.id} started over ${job.total} stored events; this page fills in as it learns.` });
    }),
  );
  return card('Backfill', 'Forget the observed schemas and learn them again from every stored event (a job). Drifts already recorded stay.', button, out);
}

export function renderSchema(view) {
  view.append(h('div', { class: 'page-head' }, h('h1', { text: 'Schema' })));
  const body = h('div', {}, h('p', { class: 'muted', text: 'Loading…' }));
  view.append(body, backfillCard());
  const load = async () => {
    try {
      const [{ drifts }, { schemas }] = await Promise.all([api('/schema/drifts', { query: { limit: 100 } }), api('/schema')]);
      replace(
        body,
        card(
          `Drifts (${drifts.length})`,
          'Changes of a sender\'s body shape, each recorded once: a field added, gone (after being in every recent event) or of another type, or a new event name.',
          drifts.length === 0 ? h('p', { class: 'empty', text: 'No drift recorded.' }) : dataTable(DRIFT_COLUMNS, drifts, { rowProps: (d) => ({ dataset: { driftId: String(d.id), kind: d.kind } }) }),
        ),
        ...(schemas.length === 0 ? [h('p', { class: 'empty', text: 'Nothing learned yet: events show up here a few seconds after they are stored.' })] : schemas.map(schemaCard)),
      );
    } catch (err) {
      replace(body, errorBox(err));
    }
  };
  load();
  return every(REFRESH_MS, load);
}
