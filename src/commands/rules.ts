import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { refusedDestinationWarnings } from '../delivery/destination-warnings.js';
import { HookrelayError } from '../errors.js';
import { loadRuleSet } from '../rules/loader.js';
import { explainBody } from '../operations/explain-event.js';
import { dryRunRule } from '../operations/rule-dry-run.js';
import { ruleJsonSchemaText } from '../rules/json-schema.js';
import { formatRuleFileError } from '../rules/rule-file-error.js';
import type { CompiledRule, RuleSet } from '../rules/types.js';
import { ruleExplanationLines } from './explain-print.js';
import { configureTransformSandbox } from '../rules/transform-sandbox.js';
import { openCommandStore } from './command-store.js';
import { judgingSettings } from './judging-settings.js';
import { refuseAbandonedStore } from './command-target.js';

interface DirFlags {
  rulesDir?: string;
}

interface LoadedRules {
  ruleSet: RuleSet;
  /** Enabled rules whose destination the server's network guard refuses, each naming the setting that allows it. */
  refused: string[];
  /** Whose allow-list judged them: the running server's, or this terminal's (offline). */
  judgedBy: string;
  offline: boolean;
}

/** The rule set as `serve` would load it (same env for ${ENV} references); exits 1 listing every error. */
async function loadOrExit(rulesDir: string | undefined): Promise<LoadedRules> {
  const config = loadConfig(process.env, rulesDir ? { rulesDir } : {});
  configureTransformSandbox(config.rules.transform);
  const result = await loadRuleSet(config.rulesDir, process.env, config.rulesMaxFileBytes);
  for (const warning of result.warnings) process.stderr.write(`warning: ${warning}\n`);
  if (!result.ok) {
    for (const error of result.errors) process.stderr.write(`${formatRuleFileError(error)}\n`);
    process.stderr.write(`${result.errors.length} error(s) in ${config.rulesDir}\n`);
    process.exit(1);
  }
  // What the server warns about at start: destinations its network guard will refuse, and how to allow them.
  const judging = await judgingSettings(config, process.env);
  const refused = refusedDestinationWarnings(result.ruleSet, judging.guard);
  for (const warning of refused) process.stderr.write(`warning: ${warning}\n`);
  return { ruleSet: result.ruleSet, refused, judgedBy: judging.judgedBy, offline: judging.offline };
}

function findRule(ruleSet: RuleSet, id: string): CompiledRule {
  const rule = ruleSet.rules.find((r) => r.id === id);
  if (!rule) throw new Error(`no rule "${id}" (rules: ${ruleSet.rules.map((r) => r.id).join(', ') || 'none'})`);
  return rule;
}

/**
 * The rule's explanation on a body from a file: every clause, and for a match what it would send (nothing
 * is sent), named with the rule set it was computed with.
 */
async function testWithFile(rule: CompiledRule, ruleSet: RuleSet, file: string, source: string, json: boolean): Promise<void> {
  const { ruleSetHash, rules } = await explainBody({ ruleSet }, await readFile(file), source, { ruleId: rule.id });
  const explanation = rules[0]!;
  const { matched, failing, notes, outgoing } = explanation;
  const transformFails = matched && outgoing?.deadReason !== undefined;
  if (json) {
    process.stdout.write(`${JSON.stringify({ ...explanation, ruleSetHash })}\n`);
  } else {
    const verdict = !matched ? `no match: ${[...failing, ...notes].join('; ')}` : transformFails ? `match, but the transform fails: ${outgoing!.deadReason}` : 'match';
    const clauses = transformFails ? '' : `\n\n${ruleExplanationLines(explanation).join('\n')}`;
    process.stdout.write(`${verdict}\nrule set ${ruleSetHash} (loaded now)${clauses}\n`);
  }
  if (!matched || transformFails) process.exitCode = 1;
}

async function testWithHistory(ruleId: string, ruleSet: RuleSet, count: number, flags: { dataDir?: string; json: boolean }): Promise<void> {
  const config = loadConfig(process.env, flags.dataDir ? { dataDir: flags.dataDir } : {});
  await refuseAbandonedStore(config);
  const store = await openCommandStore(config);
  if (!store) throw new HookrelayError('not_found', `No hookrelay database in ${config.dataDir}, so there is no history to test against. Pass --data-dir <dir> (the one serve uses).`);
  try {
    const { results } = await dryRunRule(store, ruleSet, ruleId, { last: count });
    for (const { eventId, event, matched, reason } of results) {
      const line = flags.json
        ? JSON.stringify({ eventId, event, matched, reason })
        : `${String(eventId).padStart(8)}  ${event.padEnd(24)}  ${matched ? 'match' : `no match: ${reason}`}`;
      process.stdout.write(`${line}\n`);
    }
    if (!flags.json) process.stdout.write(`${results.filter((r) => r.matched).length} of the last ${results.length} events match "${ruleId}"\n`);
  } finally {
    await store.close();
  }
}

export function registerRulesCommand(program: Command): void {
  const rules = program.command('rules').description('Check, test and describe forwarding rules');
  rules
    .command('check')
    .description("Validate every rule file, and judge their destinations with the running server's network guard (else this terminal's settings, said as offline); exit 1 listing all errors, or when a destination would be refused")
    .option('--rules-dir <dir>', 'folder of rule files (HOOKRELAY_RULES_DIR, default ./rules)')
    .action(async (flags: DirFlags) => {
      const { ruleSet, refused, judgedBy, offline } = await loadOrExit(flags.rulesDir);
      process.stderr.write(`${judgedBy}\n`);
      const counts = `${ruleSet.rules.length} rule(s)`;
      const enabled = `(${ruleSet.rules.filter((r) => r.enabled).length} enabled), rule-set ${ruleSet.hash}`;
      if (refused.length === 0) {
        process.stdout.write(`${counts} OK ${enabled}\n`);
        return;
      }
      // Valid files, but the first matching event would be dead-lettered: not OK.
      const whose = offline ? "this terminal's settings (offline)" : 'the running server';
      process.stdout.write(`${counts} valid ${enabled}; ${refused.length} destination(s) refused by ${whose}\n`);
      process.exitCode = 1;
    });
  rules
    .command('test')
    .description('Show whether a rule matches an event and exactly what it would send; sends nothing')
    .argument('<id>', 'rule id')
    .option('-f, --file <file>', 'an event body (JSON file) to test the rule against')
    .option('--source <source>', 'source the event is taken to arrive on', 'checkout')
    .option('--history <n>', 'test the rule against the last N stored events')
    .option('--data-dir <dir>', 'with --history: the data dir to read (HOOKRELAY_DATA_DIR, default ./data)')
    .option('--rules-dir <dir>', 'folder of rule files (HOOKRELAY_RULES_DIR, default ./rules)')
    .option('--json', 'machine-readable output')
    .action(async (id: string, flags: DirFlags & { file?: string; source: string; history?: string; dataDir?: string; json?: boolean }) => {
      if (!flags.file === !flags.history) throw new Error('give exactly one of --file <event.json> or --history <n>');
      const count = Number(flags.history);
      if (flags.history !== undefined && !(Number.isInteger(count) && count >= 1)) throw new Error('--history needs a whole number of events, at least 1');
      const { ruleSet } = await loadOrExit(flags.rulesDir);
      const rule = findRule(ruleSet, id);
      if (flags.file) await testWithFile(rule, ruleSet, flags.file, flags.source, Boolean(flags.json));
      else await testWithHistory(rule.id, ruleSet, count, { ...(flags.dataDir !== undefined && { dataDir: flags.dataDir }), json: Boolean(flags.json) });
    });
  rules
    .command('schema')
    .description('Print the JSON Schema of rule files (for editor completion)')
    .action(() => {
      process.stdout.write(`${ruleJsonSchemaText()}\n`);
    });
}
