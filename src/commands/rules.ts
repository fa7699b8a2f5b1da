import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { deliveryHeaders } from '../delivery/delivery-headers.js';
import { loadRuleSet } from '../rules/loader.js';
import { dryRunRules, type RuleDryRun } from '../rules/dry-run.js';
import { ruleJsonSchemaText } from '../rules/json-schema.js';
import { formatRuleFileError } from '../rules/rule-file-error.js';
import type { CompiledRule, RuleSet } from '../rules/types.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';

interface DirFlags {
  rulesDir?: string;
}

/** The rule set as `serve` would load it (same env for ${ENV} references); exits 1 listing every error. */
async function loadOrExit(rulesDir: string | undefined): Promise<RuleSet> {
  const config = loadConfig(process.env, rulesDir ? { rulesDir } : {});
  const result = await loadRuleSet(config.rulesDir, process.env);
  for (const warning of result.warnings) process.stderr.write(`warning: ${warning}\n`);
  if (!result.ok) {
    for (const error of result.errors) process.stderr.write(`${formatRuleFileError(error)}\n`);
    process.stderr.write(`${result.errors.length} error(s) in ${config.rulesDir}\n`);
    process.exit(1);
  }
  return result.ruleSet;
}

function findRule(ruleSet: RuleSet, id: string): CompiledRule {
  const rule = ruleSet.rules.find((r) => r.id === id);
  if (!rule) throw new Error(`no rule "${id}" (rules: ${ruleSet.rules.map((r) => r.id).join(', ') || 'none'})`);
  return rule;
}

/** What `rules test` prints for a matching rule: everything that would be sent, sending nothing. */
function describeOutgoing(rule: CompiledRule, run: RuleDryRun): string {
  const description = rule.describe();
  const body = run.body ?? Buffer.alloc(0);
  const signature = deliveryHeaders({ signing: rule.signing, deliveryId: 'dlv_dry_run', ruleId: rule.id, timestamp: new Date(), body });
  const lines = [
    `${description.to.method} ${description.to.url}`,
    `content-type: ${run.contentType}`,
    // Headers as written in the rule: ${ENV} references stay unresolved so no secret is printed.
    ...Object.entries(description.to.headers).map(([name, value]) => `${name}: ${value}`),
    ...Object.entries(signature).map(([name, value]) => `${name}: ${value}`),
    '',
    body.toString('utf8'),
  ];
  return lines.join('\n');
}

async function testWithFile(rule: CompiledRule, ruleSet: RuleSet, file: string, source: string, json: boolean): Promise<void> {
  const raw = await readFile(file);
  const body = JSON.parse(raw.toString('utf8')) as { event?: unknown };
  const event = typeof body.event === 'string' ? body.event : '';
  const [run] = await dryRunRules({ ...ruleSet, rules: [rule] }, { source, event, body, raw });
  if (json) {
    process.stdout.write(`${JSON.stringify({ ...run, body: run!.body?.toString('utf8') })}\n`);
  } else if (!run!.matched) {
    process.stdout.write(`no match: ${run!.reason}\n`);
  } else if (run!.deadReason) {
    process.stdout.write(`match, but the transform fails: ${run!.deadReason}\n`);
  } else {
    process.stdout.write(`match\n\n${describeOutgoing(rule, run!)}\n`);
  }
  if (!run!.matched || run!.deadReason) process.exitCode = 1;
}

async function testWithHistory(rule: CompiledRule, ruleSet: RuleSet, count: number, json: boolean): Promise<void> {
  const config = loadConfig(process.env);
  const store = new SqliteStore({ dataDir: config.dataDir, durability: 'normal' });
  try {
    const { items } = await store.listEvents({}, { limit: count });
    let matched = 0;
    for (const summary of items) {
      const stored = (await store.getEvent(summary.id))!;
      const [run] = await dryRunRules({ ...ruleSet, rules: [rule] }, { source: stored.source, event: stored.event, body: JSON.parse(stored.body.toString('utf8')), raw: stored.body });
      if (run!.matched) matched += 1;
      const line = json
        ? JSON.stringify({ eventId: summary.id, event: summary.event, matched: run!.matched, reason: run!.reason })
        : `${String(summary.id).padStart(8)}  ${summary.event.padEnd(24)}  ${run!.matched ? 'match' : `no match: ${run!.reason}`}`;
      process.stdout.write(`${line}\n`);
    }
    if (!json) process.stdout.write(`${matched} of the last ${items.length} events match "${rule.id}"\n`);
  } finally {
    await store.close();
  }
}

export function registerRulesCommand(program: Command): void {
  const rules = program.command('rules').description('Check, test and describe forwarding rules');
  rules
    .command('check')
    .description('Validate every rule file; exit 1 listing all errors as file:line path: message')
    .option('--rules-dir <dir>', 'folder of rule files (HOOKRELAY_RULES_DIR, default ./rules)')
    .action(async (flags: DirFlags) => {
      const ruleSet = await loadOrExit(flags.rulesDir);
      process.stdout.write(`${ruleSet.rules.length} rule(s) OK (${ruleSet.rules.filter((r) => r.enabled).length} enabled), rule-set ${ruleSet.hash}\n`);
    });
  rules
    .command('test')
    .description('Show whether a rule matches an event and exactly what it would send; sends nothing')
    .argument('<id>', 'rule id')
    .option('-f, --file <file>', 'an event body (JSON file) to test the rule against')
    .option('--source <source>', 'source the event is taken to arrive on', 'checkout')
    .option('--history <n>', 'test the rule against the last N stored events (uses HOOKRELAY_DATA_DIR)')
    .option('--rules-dir <dir>', 'folder of rule files')
    .option('--json', 'machine-readable output')
    .action(async (id: string, flags: DirFlags & { file?: string; source: string; history?: string; json?: boolean }) => {
      if (!flags.file === !flags.history) throw new Error('give exactly one of --file <event.json> or --history <n>');
      const ruleSet = await loadOrExit(flags.rulesDir);
      const rule = findRule(ruleSet, id);
      if (flags.file) await testWithFile(rule, ruleSet, flags.file, flags.source, Boolean(flags.json));
      else await testWithHistory(rule, ruleSet, Math.max(1, Number(flags.history)), Boolean(flags.json));
    });
  rules
    .command('schema')
    .description('Print the JSON Schema of rule files (for editor completion)')
    .action(() => {
      process.stdout.write(`${ruleJsonSchemaText()}\n`);
    });
}
