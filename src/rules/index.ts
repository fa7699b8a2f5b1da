// The rules stage as the rest of hookrelay uses it: load and watch rule files, plan deliveries for an event.
export type { CompiledRule, LoadResult, OutgoingSigning, RuleDescription, RuleEventInput, RuleFileError, RuleSet } from './types.js';
export { loadRuleSet } from './loader.js';
export { RuleSetWatcher, type RuleLogger, type RuleSetError, type RuleSetStatus, type RuleSetWatcherOptions } from './watcher.js';
export { planDeliveries, type PlannedDelivery } from './plan.js';
export { dryRunRules, type RuleDryRun } from './dry-run.js';
export { formatRuleFileError, invalidRulesError } from './rule-file-error.js';
export { ruleJsonSchema, ruleJsonSchemaText, writeRuleJsonSchema } from './json-schema.js';
export { TransformError } from './transform.js';
