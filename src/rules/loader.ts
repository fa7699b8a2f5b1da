import type { Env } from './env-references.js';
import type { RuleIssue } from './build-rule.js';
import { compileRule, isRuleKey } from './compile-rule.js';
import { formatPath, formatRuleFileError } from './rule-file-error.js';
import { readRuleFiles, RULE_FILE_LIMITS, type RuleFilesSnapshot } from './rule-files.js';
import type { CompiledRule, LoadResult, RuleFileError } from './types.js';
import { parseRuleFile, type RuleSource } from './yaml-source.js';

/**
 * Loads every rule file in `dir` (sorted by name) and reports every problem in every file at once, each
 * as `file:line path: message`. A missing or empty directory is a valid, empty rule set; only a
 * directory that exists but cannot be listed throws.
 */
export async function loadRuleSet(dir: string, env: Env, maxFileBytes = RULE_FILE_LIMITS.maxFileBytes): Promise<LoadResult> {
  return compileRuleFiles(await readRuleFiles(dir, { ...RULE_FILE_LIMITS, maxFileBytes }), env);
}

export function compileRuleFiles(snapshot: RuleFilesSnapshot, env: Env, loadedAt = new Date()): LoadResult {
  const errors: RuleFileError[] = [];
  const warnings: string[] = [];
  if (!snapshot.exists) warnings.push(`rules directory ${snapshot.dir} does not exist; no rules are loaded`);

  const rules: CompiledRule[] = [];
  const firstDefinedAt = new Map<string, string>();
  for (const file of snapshot.files) {
    const fileErrors: RuleFileError[] = [];
    if (file.readError !== undefined) {
      fileErrors.push({ file: file.name, line: 1, path: '', message: file.readError });
    }
    const parsed = parseRuleFile(file.text, isRuleKey);
    fileErrors.push(...parsed.problems.map((problem) => ({ file: file.name, line: problem.line, path: '', message: problem.message })));

    for (const source of parsed.rules) {
      const located = (issue: RuleIssue): RuleFileError => toFileError(file.name, source, issue);
      const compiled = compileRule(source.value, { file: file.name, line: source.line }, env);
      fileErrors.push(...compiled.errors.map(located));
      warnings.push(...compiled.warnings.map(located).map(formatRuleFileError));
      if (!compiled.rule) continue;

      const { id } = compiled.rule;
      const previous = firstDefinedAt.get(id);
      if (previous !== undefined) {
        fileErrors.push(located({ path: ['id'], message: `duplicate id "${id}" (also defined at ${previous})` }));
        continue;
      }
      firstDefinedAt.set(id, `${file.name}:${source.lineOf(['id'])}`);
      rules.push(compiled.rule);
    }
    // In file order, then line order, the way people read the file (sort is stable).
    errors.push(...fileErrors.sort((a, b) => a.line - b.line));
  }

  if (errors.length > 0) return { ok: false, errors, warnings };
  return {
    ok: true,
    ruleSet: { rules, hash: snapshot.hash, loadedAt, files: snapshot.files.map((file) => file.name) },
    warnings,
  };
}

function toFileError(file: string, source: RuleSource, issue: RuleIssue): RuleFileError {
  const linePath = issue.key === undefined ? issue.path : [...issue.path, issue.key];
  const line = issue.offset === undefined ? source.lineOf(linePath) : source.lineWithin(issue.path, issue.offset);
  return { file, line, path: formatPath([...source.prefix, ...issue.path]), message: issue.message };
}
