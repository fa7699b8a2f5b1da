import { Option, type Command } from 'commander';
import { HookrelayError } from '../errors.js';
import { DEFAULT_ROUTE_MODE, ROUTE_MODES, type RouteMode } from '../operations/replay-routing.js';
import type { AdminTarget, EventQuery, ResendSigning } from './admin-target.js';
import { printEditedReplay, printEventDetail, printEventTable, printReplayed, printResend } from './admin-print.js';
import { readInput } from './read-input.js';
import { runBulk } from './bulk-run.js';
import { addLocalOnlyOptions, addTargetOptions, openTarget, openLocal, withTarget, type TargetFlags } from './command-target.js';
import { addExplainCommand } from './events-explain.js';
import { ImportFileError, readImport, writeExport } from './archive-file.js';
import { addEventFilterOptions, eventQueryOf, positiveInt, type EventFilterFlags } from './event-filter-flags.js';
import { INTERRUPTED_EXIT_CODE, onInterrupt } from './interrupt.js';
import { exitQuietlyWhenStdoutCloses, printJson, printLine } from './output.js';
import { createProgress } from './progress-bar.js';
import { checkSecretForScheme } from './signing-secret.js';

type Flags = TargetFlags & EventFilterFlags;

const eventId = (value: string): number => positiveInt(value, 'event id');

function hasFilter(query: EventQuery): boolean {
  return Object.keys(query).length > 0;
}

async function list(flags: Flags & { limit: string; cursor?: string }): Promise<void> {
  const limit = positiveInt(flags.limit, '--limit', 500);
  const page = await withTarget(await openTarget(flags, process.env), (b) => b.listEvents(eventQueryOf(flags), { limit, cursor: flags.cursor }));
  if (flags.json) printJson(page);
  else printEventTable(page);
}

async function show(id: string, flags: TargetFlags): Promise<void> {
  const detail = await withTarget(await openTarget(flags, process.env), (b) => b.getEvent(eventId(id)));
  if (flags.json) printJson(detail);
  else printEventDetail(detail);
}

type ReplayFlags = Flags & {
  rule?: string; force?: boolean; all?: boolean; afterId?: string; route: RouteMode; dryRun?: boolean; body?: string; meantInvalid?: boolean;
};

/** `--body`: edit and replay one event (a copy linked to it is stored, then sent through the rules, --rule or --to). One event, no filter: `--to` is the URL. */
async function replayEdited(b: AdminTarget, id: string | undefined, flags: ReplayFlags): Promise<void> {
  if (id === undefined) throw new HookrelayError('bad_request', '--body edits one event: give its id.');
  if (flags.route !== DEFAULT_ROUTE_MODE || flags.dryRun || flags.force) {
    throw new HookrelayError('bad_request', "--body sends through today's rules, --rule (even if its filter does not match) or --to; --route, --dry-run and --force do not apply.");
  }
  if (flags.rule !== undefined && flags.to !== undefined) throw new HookrelayError('bad_request', 'Give --rule or --to, not both.');
  const body = (await readInput(flags.body!)).toString('utf8');
  const answer = await b.replayEdited(eventId(id), { body, ...(flags.meantInvalid && { meantInvalid: true }), ruleId: flags.rule, to: flags.to });
  if (flags.json) printJson(answer);
  else printEditedReplay(answer);
}

async function replay(id: string | undefined, flags: ReplayFlags): Promise<void> {
  const target = await openTarget(flags, process.env);
  await withTarget(target, async (b) => {
    if (flags.force && flags.rule === undefined) throw new HookrelayError('bad_request', '--force needs --rule <id>: it replays to a rule the event does not match.');
    if (flags.body !== undefined) return replayEdited(b, id, flags);
    if (flags.meantInvalid) throw new HookrelayError('bad_request', '--meant-invalid goes with --body <file>.');
    const routing = { route: flags.route, ...(flags.dryRun && { dryRun: true }) };
    if (id !== undefined) {
      const answer = await b.replayEvent(eventId(id), { ruleId: flags.rule, force: flags.force, ...routing });
      if (flags.json) printJson(answer);
      else printReplayed(answer);
      return;
    }
    const query = eventQueryOf(flags);
    if (!hasFilter(query) && !flags.all) throw new HookrelayError('bad_request', 'Give an event id, a filter (e.g. --event, --from), or --all to replay every stored event.');
    if (flags.force) throw new HookrelayError('bad_request', '--force applies to replaying one event.');
    const afterId = flags.afterId === undefined ? undefined : positiveInt(flags.afterId, '--after-id');
    await runBulk('replay', 'events', Boolean(flags.json), (control) => b.replayEvents({ ...query, afterId }, { ruleId: flags.rule, ...routing }, control));
  });
}

async function release(id: string, flags: TargetFlags & { force?: boolean; by: string }): Promise<void> {
  const answer = await withTarget(await openTarget(flags, process.env), (b) => b.releaseEvent(eventId(id), { force: flags.force, by: flags.by }));
  if (flags.json) printJson(answer);
  else {
    const forced = answer.event.release?.forced ? ' (forced)' : '';
    printLine(`released event ${answer.event.id}${forced}: ${answer.deliveryIds.length} deliveries created`);
  }
}

function signingOf(flags: { sign: string; secret?: string }): ResendSigning {
  if (flags.sign === 'original' || flags.sign === 'none') return { mode: flags.sign };
  if (!flags.secret) throw new HookrelayError('bad_request', `--sign ${flags.sign} needs --secret.`);
  const scheme = flags.sign as 'hmac-sha256-hex' | 'standard-webhooks';
  checkSecretForScheme(scheme, flags.secret, '--secret');
  return { mode: 'resign', scheme, secret: flags.secret };
}

async function resend(id: string, flags: TargetFlags & { to: string; sign: string; secret?: string }): Promise<void> {
  const signing = signingOf(flags);
  const result = await withTarget(await openTarget(flags, process.env), (b) => b.resendEvent(eventId(id), flags.to, signing));
  if (flags.json) printJson(result);
  else printResend(result);
  const ok = result.status !== null && result.status >= 200 && result.status < 300;
  if (!ok) process.exitCode = 1;
}

async function exportEvents(flags: Flags & { output?: string }): Promise<void> {
  const interrupt = onInterrupt('export');
  try {
    const outcome = await withTarget(await openTarget(flags, process.env), async (b) =>
      writeExport(await b.exportEvents(eventQueryOf(flags)), { file: flags.output }, createProgress('export'), interrupt.signal),
    );
    const where = flags.output ? ` to ${flags.output}` : '';
    if (outcome.interrupted) {
      process.stderr.write(flags.output ? `export interrupted after ${outcome.exported} events; ${flags.output} was not written\n` : `export interrupted after ${outcome.exported} events; the output is incomplete: discard it\n`);
      process.exitCode = INTERRUPTED_EXIT_CODE;
    } else {
      process.stderr.write(`exported ${outcome.exported} events${where}\n`);
    }
  } finally {
    interrupt.dispose();
  }
}

async function importEvents(file: string, flags: TargetFlags): Promise<void> {
  const local = await openLocal(flags, process.env, { create: true });
  const interrupt = onInterrupt('import');
  try {
    const outcome = await readImport(file, (events) => local.importEvents(events), local.importPolicy(), createProgress('import'), interrupt.signal);
    const summary = { imported: outcome.imported, duplicates: outcome.duplicates, seenBefore: outcome.seenBefore, interrupted: outcome.interrupted, unconfiguredSources: outcome.unconfiguredSources };
    if (flags.json) printJson(summary);
    else {
      printLine(`imported ${outcome.imported}, duplicates ${outcome.duplicates}, seen before ${outcome.seenBefore}${outcome.interrupted ? ' (interrupted: run the same command again to carry on)' : ''}`);
      const unconfigured = Object.entries(outcome.unconfiguredSources);
      if (unconfigured.length > 0) {
        printLine(`of them from sources not configured here: ${unconfigured.map(([name, n]) => `${JSON.stringify(name)} (${n})`).join(', ')}`);
      }
    }
    if (outcome.interrupted) process.exitCode = INTERRUPTED_EXIT_CODE;
  } catch (err) {
    if (err instanceof ImportFileError) {
      process.stderr.write(`imported ${err.outcome.imported}, duplicates ${err.outcome.duplicates}, seen before ${err.outcome.seenBefore} before the error\n`);
    }
    throw err;
  } finally {
    interrupt.dispose();
    await local.close();
  }
}

export function registerEventsCommand(program: Command): void {
  const events = program
    .command('events')
    .description('List, inspect, explain, replay, resend, export and import stored events (local data dir, or a server with --url)')
    .hook('preAction', exitQuietlyWhenStdoutCloses);

  addEventFilterOptions(addTargetOptions(events.command('list').description('List events, newest first')))
    .option('--limit <n>', 'events per page (1-500)', '50')
    .option('--cursor <cursor>', 'continue after the previous page (printed as "more: --cursor ...")')
    .action(list);

  addTargetOptions(events.command('show').description('Show one event: headers, raw body and its deliveries with every attempt'))
    .argument('<id>', 'event id')
    .action(show);

  addEventFilterOptions(addTargetOptions(events.command('replay').description("Forward stored events again (new deliveries), through today's rules or the rules that routed them")))
    .argument('[id]', 'one event; without it, every event the filter selects')
    .addOption(
      new Option('--route <mode>', "current: today's rules, as if the event arrived now; original: the rule set that routed the event when it arrived")
        .choices([...ROUTE_MODES])
        .default(DEFAULT_ROUTE_MODE),
    )
    .option('--dry-run', 'show what would be sent where (bulk: counts per rule and a sample); send nothing')
    .option('--body <file>', 'edit and replay one event: this JSON file ("-" for standard input) is stored as a copy linked to the event, then sent through the rules, --rule, or --to <url> (one unsigned delivery to that URL)')
    .option('--meant-invalid', 'with --body: store and send a body that fails the event schema (stored marked invalid)')
    .option('--rule <id>', 'only this rule (with --body: even if its filter does not match)')
    .option('--force', 'with an event id and --rule: replay even if the rule does not match the event')
    .option('--all', 'with no id and no filter: replay every stored event')
    .option('--after-id <id>', 'local mode: only events after this id (carry on after an interruption)')
    .action(replay);

  addExplainCommand(events);

  addTargetOptions(events.command('release').description('Route an event held in quarantine, once (list them with "events list --quarantine held")'))
    .argument('<id>', 'event id')
    .option('--force', 'release although the event schema or the pinned contract still refuses the body, or the transfer was stored since from a corrected body (recorded)')
    .option('--by <name>', 'who releases it, recorded with the release', 'cli')
    .action(release);

  addTargetOptions(events.command('resend').description('POST the stored raw bytes of one event to a URL, once (no delivery is recorded)'))
    .argument('<id>', 'event id')
    .requiredOption('--to <url>', 'where to send it')
    .addOption(new Option('--sign <mode>', 'original: the stored signature headers; or sign again with --secret').choices(['original', 'hmac-sha256-hex', 'standard-webhooks', 'none']).default('original'))
    .option('--secret <secret>', 'secret for --sign hmac-sha256-hex or standard-webhooks')
    .action(resend);

  addEventFilterOptions(addTargetOptions(events.command('export').description('Write events as NDJSON (exact raw bytes, base64) to stdout or --output, oldest first')))
    .option('-o, --output <file>', 'write to this file (complete or not at all) instead of stdout')
    .action(exportEvents);

  addLocalOnlyOptions(
    events.command('import').description('Store the events of an NDJSON export in a data dir (local only); events already stored are skipped'),
    'events import writes to a data dir directly: the admin API has no import, so --url is not available.',
  )
    .argument('<file>', 'NDJSON file written by "events export" ("-" for standard input)')
    .action(importEvents);
}
