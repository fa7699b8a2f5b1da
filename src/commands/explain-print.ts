import type { EventExplanation } from '../operations/explain-event.js';
import { clauseText, type ClauseExplanation, type RuleExplanation } from '../rules/explain.js';

/** Explanations as terminal text: one block per rule, every clause with a ✓ or ✗, nested clauses indented. */

const mark = (pass: boolean): string => (pass ? '✓' : '✗');

function clauseLines(clause: ClauseExplanation, depth: number, prefix = ''): string[] {
  const line = `${'  '.repeat(depth)}${mark(clause.pass)} ${prefix}${clauseText(clause)}`;
  return [line, ...(clause.children ?? []).flatMap((child) => clauseLines(child, depth + 1))];
}

function verdict(rule: RuleExplanation): string {
  if (rule.matched) return 'match';
  const failing = rule.failing.length;
  if (failing === 0) return 'no match (disabled)';
  return `no match: ${failing} failing clause${failing === 1 ? '' : 's'}`;
}

/** One rule's explanation: verdict, notes, every clause, and for a match what it would send. */
export function ruleExplanationLines(rule: RuleExplanation): string[] {
  const lines = [`${mark(rule.matched)} ${rule.ruleId}  ${verdict(rule)}  (${rule.file}:${rule.line}${rule.enabled ? '' : ', disabled'})`];
  for (const note of rule.notes) lines.push(`    note: ${note}`);
  lines.push(...clauseLines(rule.on, 2), ...clauseLines(rule.source, 2), ...rule.where.flatMap((clause) => clauseLines(clause, 2, 'where ')));
  const { outgoing, destination } = rule;
  if (destination?.checked && destination.allowed) lines.push(`    destination allowed by the network guard (${destination.addresses.join(', ')})`);
  if (outgoing) {
    lines.push(
      '',
      `    ${outgoing.method} ${outgoing.url}`,
      ...Object.entries(outgoing.headers).map(([name, value]) => `    ${name}: ${value}`),
      '',
      ...outgoing.body.split('\n').map((line) => `    ${line}`),
    );
  }
  return lines;
}

export function eventExplanationText(explanation: EventExplanation): string {
  const { event, rules, matchedRuleIds } = explanation;
  const subject = event.id === null ? `${event.event || '(no event name)'} on ${event.source}` : `event #${event.id} ${event.event} on ${event.source}`;
  const matched = matchedRuleIds.length > 0 ? ` (${matchedRuleIds.join(', ')})` : '';
  const lines = [`${subject}: ${matchedRuleIds.length} of ${rules.length} rule${rules.length === 1 ? '' : 's'} match${matched}`, `rule set ${explanation.ruleSetHash} (loaded now)`];
  if (explanation.ruleSetNote) lines.push(`note: ${explanation.ruleSetNote}`);
  for (const rule of rules) lines.push('', ...ruleExplanationLines(rule));
  return `${lines.join('\n')}\n`;
}
