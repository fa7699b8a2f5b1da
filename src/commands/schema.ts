import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { HookrelayError } from '../errors.js';
import type { ObservedSchemaView } from '../operations/schema-view-schemas.js';
import { diffContract, exportContract, type ContractMode, type FieldDifference } from '../schema/contract.js';
import type { ObservedSchema } from '../store/schema-store.js';
import { addTargetOptions, locateTarget, type TargetFlags } from './command-target.js';
import { exitQuietlyWhenStdoutCloses, printJson, printLine } from './output.js';
import { createProgress } from './progress-bar.js';
import { LocalSchemaTarget, RemoteSchemaTarget, type SchemaTarget } from './schema-target.js';
import { formatTable, shortTime } from './table.js';

interface FilterFlags extends TargetFlags {
  source?: string;
  event?: string;
}

/** The running server's admin API when one runs for this configuration, else its store (see `locateTarget`). */
async function openSchemaTarget(flags: TargetFlags): Promise<SchemaTarget> {
  const env = process.env;
  const location = await locateTarget(flags, env);
  return 'url' in location ? new RemoteSchemaTarget(location.url, location.token) : LocalSchemaTarget.open(location.config, env);
}

async function withSchemaTarget<T>(flags: TargetFlags, fn: (target: SchemaTarget) => Promise<T>): Promise<T> {
  const target = await openSchemaTarget(flags);
  try {
    return await fn(target);
  } finally {
    await target.close();
  }
}

/** The observed schema as the API shows it, back in the store's shape (what export and diff work on). */
export function observedSchemaOf(view: ObservedSchemaView): ObservedSchema {
  return {
    source: view.source,
    event: view.event,
    eventsSeen: view.eventsSeen,
    firstSeen: Date.parse(view.firstSeen),
    lastSeen: Date.parse(view.lastSeen),
    truncated: view.truncated,
    fields: view.fields.map((f) => ({ path: f.path, types: f.types, present: f.present, firstSeen: Date.parse(f.firstSeen), lastSeen: Date.parse(f.lastSeen), example: f.example, streak: 0 })),
  };
}

const typesText = (types: Partial<Record<string, number>>): string => Object.keys(types).join('|');

function schemaLines(view: ObservedSchemaView): string[] {
  const lines = [`${view.source} ${view.event}: ${view.eventsSeen} events, ${shortTime(view.firstSeen)} to ${shortTime(view.lastSeen)}${view.spec === 'envelope' ? ' (unrecognised name: compared with the envelope)' : ''}${view.truncated > 0 ? `, ${view.truncated} path sightings beyond the field cap` : ''}`];
  const rows = view.fields.map((f) => [f.path, typesText(f.types), `${f.present} (${Math.round(f.share * 1000) / 10}%)`, shortTime(f.firstSeen), shortTime(f.lastSeen), f.example, f.spec === 'as_spec' ? '' : f.spec]);
  lines.push(formatTable(['PATH', 'TYPES', 'PRESENT', 'FIRST SEEN', 'LAST SEEN', 'EXAMPLE', 'SPEC'], rows, 60));
  if (view.specNotObserved.length > 0) lines.push(`in the spec, never observed: ${view.specNotObserved.map((f) => `${f.path}${f.required ? ' (required)' : ''}`).join(', ')}`);
  return lines;
}

async function show(flags: FilterFlags): Promise<void> {
  const schemas = await withSchemaTarget(flags, (b) => b.schemas({ source: flags.source, event: flags.event }));
  if (flags.json) return printJson({ schemas });
  if (schemas.length === 0) printLine('no observed schema yet (events are learned a few seconds after they are stored; `hookrelay schema backfill` learns the stored ones)');
  for (const [i, view] of schemas.entries()) {
    if (i > 0) printLine();
    for (const line of schemaLines(view)) printLine(line);
  }
}

async function drifts(flags: FilterFlags & { limit: string }): Promise<void> {
  const list = await withSchemaTarget(flags, (b) => b.drifts({ source: flags.source, event: flags.event, limit: Number(flags.limit) }));
  if (flags.json) return printJson({ drifts: list });
  if (list.length === 0) return printLine('no drifts recorded');
  const rows = list.map((d) => [d.id, shortTime(d.detectedAt), d.source, d.event, d.kind, d.path, `${d.before.join('|') || '-'} -> ${d.after.join('|') || '-'}`, d.eventId, [...d.rules.where, ...d.rules.transform.map((r) => `${r} (transform?)`)].join(', ')]);
  printLine(formatTable(['ID', 'DETECTED', 'SOURCE', 'EVENT', 'KIND', 'PATH', 'TYPES', 'EVENT ID', 'RULES'], rows, 60));
}

async function observedOne(flags: TargetFlags, source: string, event: string): Promise<ObservedSchema> {
  const [view] = await withSchemaTarget(flags, (b) => b.schemas({ source, event }));
  if (!view) throw new HookrelayError('not_found', `No observed schema for source "${source}", event "${event}" (learned a few seconds after events are stored; \`hookrelay schema backfill\` learns the stored ones).`);
  return observedSchemaOf(view);
}

async function exportCommand(flags: FilterFlags & { out?: string; mode: string }): Promise<void> {
  if (!flags.source || !flags.event) throw new HookrelayError('bad_request', 'Pass --source and --event: a contract describes one event name of one source.');
  if (flags.mode !== 'warn' && flags.mode !== 'quarantine') throw new HookrelayError('bad_request', `--mode is warn or quarantine, not "${flags.mode}".`);
  const contract = exportContract(await observedOne(flags, flags.source, flags.event), flags.mode as ContractMode);
  const text = `${JSON.stringify(contract, null, 2)}\n`;
  if (flags.out) {
    writeFileSync(flags.out, text);
    process.stderr.write(`wrote ${flags.out}\n`);
  } else process.stdout.write(text);
}

function differenceLine(d: FieldDifference): string {
  const types = (list: readonly string[]) => list.join('|') || '-';
  switch (d.kind) {
    case 'not_in_contract':
      return `+ ${d.path}: observed (${types(d.observed)}), not in the contract`;
    case 'not_observed':
      return `- ${d.path}: in the contract (${types(d.expected)}), never observed`;
    case 'not_always_present':
      return `? ${d.path}: required by the contract, missing from some observed events`;
    case 'type_differs':
      return `~ ${d.path}: contract allows ${types(d.expected)}, observed ${types(d.observed)}`;
  }
}

async function diff(file: string, flags: TargetFlags): Promise<void> {
  let contract: Record<string, unknown>;
  try {
    contract = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new HookrelayError('bad_request', `${file} is not a readable JSON file: ${(err as Error).message}`);
  }
  const source = contract['x-hookrelay-source'];
  const event = contract['x-hookrelay-event'];
  if (typeof source !== 'string' || typeof event !== 'string') throw new HookrelayError('bad_request', `${file} is not a pinned contract: it needs "x-hookrelay-source" and "x-hookrelay-event".`);
  const differences = diffContract(contract, await observedOne(flags, source, event));
  if (flags.json) printJson({ source, event, differences });
  else if (differences.length === 0) printLine(`${file}: the observed schema of ${source} ${event} matches the contract`);
  else {
    printLine(`${file}: ${differences.length} difference${differences.length === 1 ? '' : 's'} between the contract and the observed schema of ${source} ${event}`);
    for (const d of differences) printLine(differenceLine(d));
  }
  // Non-zero for CI: the sender's body no longer matches what was pinned.
  if (differences.length > 0) process.exitCode = 1;
}

async function backfill(flags: TargetFlags): Promise<void> {
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.on('SIGINT', onSigint);
  const bar = createProgress('learning');
  let started = false;
  try {
    const result = await withSchemaTarget(flags, (b) =>
      b.backfill((p) => {
        if (!started) bar.start(p.total);
        started = true;
        bar.update(p.processed, p.total);
      }, controller.signal),
    );
    bar.stop();
    if (flags.json) printJson(result);
    else printLine(`backfill ${result.state}: ${result.processed} of ${result.total} stored events learned${result.error ? ` (${result.error})` : ''}`);
    if (result.state !== 'done') process.exitCode = 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

export function registerSchemaCommand(program: Command): void {
  const schema = program.command('schema').description('The observed schema of each (source, event name), its drifts, and pinned contracts');
  const filters = (command: Command): Command => command.option('--source <name>', 'only this source').option('--event <name>', 'only this event name');
  addTargetOptions(filters(schema.command('show').description('Every field path with its types, presence, first and last seen, an example, and how it compares with the spec-derived schema (local data dir, or a server with --url)')))
    .hook('preAction', exitQuietlyWhenStdoutCloses)
    .action(show);
  addTargetOptions(filters(schema.command('drifts').description('Drifts recorded (a field added, removed or retyped, a new event name), newest first, with the first event that showed each and the rules that read the field')))
    .option('--limit <n>', 'at most this many', '100')
    .hook('preAction', exitQuietlyWhenStdoutCloses)
    .action(drifts);
  addTargetOptions(filters(schema.command('export').description('Write the observed schema of one event name as a pinned contract (JSON Schema 2020-12, mode warn)')))
    .option('--out <file>', 'write to this file instead of stdout (keep it in the contracts dir, named *.schema.json)')
    .option('--mode <mode>', 'x-hookrelay-mode of the contract: warn or quarantine', 'warn')
    .action(exportCommand);
  addTargetOptions(schema.command('diff').description('Compare a pinned contract file with the observed schema; exits 1 when they differ (for CI)').argument('<file>', 'a *.schema.json contract'))
    .action(diff);
  addTargetOptions(schema.command('backfill').description('Build the observed schema again from every stored event (a job on a server with --url; learned in this process on a data dir no server holds)'))
    .action(backfill);
}
