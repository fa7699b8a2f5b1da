import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { destinationCheck } from '../delivery/destination-check.js';
import { HookrelayError } from '../errors.js';
import { explainBody, type EventExplanation, type ExplainRequest } from '../operations/explain-event.js';
import { addTargetOptions, commandConfig, openTarget, withTarget, type TargetFlags } from './command-target.js';
import { positiveInt } from './event-filter-flags.js';
import { eventExplanationText } from './explain-print.js';
import { judgingSettings } from './judging-settings.js';
import { loadCurrentRules } from './local-target.js';
import { printJson } from './output.js';

type ExplainFlags = TargetFlags & { rule?: string; file?: string; source: string };

async function explain(id: string | undefined, flags: ExplainFlags): Promise<void> {
  if ((id === undefined) === (flags.file === undefined)) throw new HookrelayError('bad_request', 'Give an event id or --file <body.json> (one of them).');
  const request = flags.rule === undefined ? {} : { ruleId: flags.rule };
  const explanation =
    id !== undefined
      ? await withTarget(await openTarget(flags, process.env), (target) => target.explainEvent(positiveInt(id, 'event id'), request))
      : await explainFile(flags.file!, flags, request);
  if (flags.json) printJson(explanation);
  else process.stdout.write(eventExplanationText(explanation));
}

/** A body that is not stored, against the local rules dir, its destinations judged by the running server's network guard (else offline, said so). */
async function explainFile(file: string, flags: ExplainFlags, request: ExplainRequest): Promise<EventExplanation> {
  if (flags.url !== undefined) throw new HookrelayError('bad_request', '--file explains a body against local rules (--rules-dir); it has no remote mode.');
  const config = commandConfig(flags, process.env);
  const judging = await judgingSettings(config, process.env);
  process.stderr.write(`${judging.judgedBy}\n`);
  const parts = { ruleSet: await loadCurrentRules(config, process.env), checkDestination: destinationCheck(judging.guard, { resolveNames: true }) };
  return explainBody(parts, await readFile(file), flags.source, request);
}

/** `events explain`: local (data dir) or remote (`--url`), like the other events commands. */
export function addExplainCommand(events: Command): void {
  addTargetOptions(events.command('explain').description('Why each rule takes an event or not, clause by clause, and what a matching rule would send (sends nothing)'))
    .argument('[id]', 'a stored event')
    .option('--rule <id>', 'only this rule')
    .option('-f, --file <file>', 'an event body (JSON file) instead of a stored event, against the local rules')
    .option('--source <source>', 'with --file: the source the body is taken to arrive on', 'checkout')
    .action(explain);
}
