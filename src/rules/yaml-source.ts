import { LineCounter, isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node } from 'yaml';
import type { PathSegment } from './query-validation.js';

/**
 * Splits a rule file into rules, keeping the YAML nodes so any problem found later (a zod issue path,
 * a bad operator, a JSONata position) can be reported with the line it is on.
 * A file holds one rule per YAML document (`---` between them), and a document may also be a list of rules.
 */

export interface RuleSource {
  value: unknown;
  /** Line the rule starts on. */
  line: number;
  /** `[index]` when the rule is an item of a top-level list, so messages can say which one. */
  prefix: PathSegment[];
  /** Line of the node at `path` (relative to the rule), or of the deepest part of the path that exists. */
  lineOf(path: readonly PathSegment[]): number;
  /** Line of character `offset` inside the string value at `path` (exact for `|` block scalars). */
  lineWithin(path: readonly PathSegment[], offset: number): number;
}

export interface ParsedRuleFile {
  rules: RuleSource[];
  problems: { line: number; message: string }[];
}

/**
 * `isRuleKey` tells a rule's top-level keys (misspelt ones included) from anything else. A document with
 * none of them is reported as not a rule without quoting it: a symlink or a mistake can put any file in
 * the rules directory (a secrets file, a key), and its content must not reach logs or the admin API.
 */
export function parseRuleFile(text: string, isRuleKey: (key: string) => boolean): ParsedRuleFile {
  const lineCounter = new LineCounter();
  const lineAt = (offset: number) => Math.max(1, lineCounter.linePos(offset).line);
  const parsed: ParsedRuleFile = { rules: [], problems: [] };
  const looksLikeRules = (node: Node | null) => (isSeq(node) ? node.items.some((item) => hasRuleKey(item, isRuleKey)) : hasRuleKey(node, isRuleKey));

  for (const doc of parseAllDocuments(text, { lineCounter })) {
    const contents = doc.contents as Node | null;
    if (doc.errors.length > 0) {
      if (!looksLikeRules(contents)) {
        const [first] = doc.errors;
        parsed.problems.push({ line: first?.linePos?.[0].line ?? 1, message: `${NOT_A_RULE}: not valid YAML (${first?.code ?? 'syntax error'}) and no rule key found` });
        continue;
      }
      for (const error of doc.errors) {
        parsed.problems.push({ line: error.linePos?.[0].line ?? 1, message: firstLine(error.message) });
      }
      continue;
    }
    if (contents === null || (isScalar(contents) && contents.value === null)) continue; // empty or comments only
    if (!looksLikeRules(contents)) {
      parsed.problems.push({ line: lineAt(contents.range?.[0] ?? 0), message: `${NOT_A_RULE}: ${notARuleBecause(contents)}` });
      continue;
    }
    const value = toPlainValue(doc);
    if (!value.ok) {
      parsed.problems.push({ line: lineAt(contents.range?.[0] ?? 0), message: value.message });
      continue;
    }
    if (isSeq(contents)) {
      contents.items.forEach((item, index) => {
        if (hasRuleKey(item, isRuleKey)) parsed.rules.push(ruleSource((value.value as unknown[])[index], item as Node, [index], lineAt));
        else parsed.problems.push({ line: lineAt((item as Node | null)?.range?.[0] ?? 0), message: `list item [${index}] is not a rule (its content is not shown): ${notARuleBecause(item as Node | null)}` });
      });
    } else {
      parsed.rules.push(ruleSource(value.value, contents, [], lineAt));
    }
  }
  return parsed;
}

const NOT_A_RULE = 'not a rule file (its content is not shown)';

function hasRuleKey(node: unknown, isRuleKey: (key: string) => boolean): boolean {
  return isMap(node) && node.items.some((pair) => isScalar(pair.key) && isRuleKey(String(pair.key.value)));
}

/** What the node is, in words that quote none of it. */
function notARuleBecause(node: Node | null): string {
  if (isMap(node)) return 'none of its keys is a rule key (id, on, where, to, ...)';
  if (isSeq(node)) return 'it is a list with no rule in it';
  const kind = isScalar(node) ? `a ${node.value === null ? 'null' : typeof node.value}` : 'not a mapping';
  return `it is ${kind}, not a mapping of rule keys (id, on, where, to, ...)`;
}

function ruleSource(value: unknown, root: Node, prefix: PathSegment[], lineAt: (offset: number) => number): RuleSource {
  const lineOfNode = (node: Node) => lineAt(node.range?.[0] ?? 0);
  return {
    value,
    prefix,
    line: lineOfNode(root),
    lineOf: (path) => {
      const found = locate(root, path);
      return lineOfNode(found.keyNode ?? found.node);
    },
    lineWithin: (path, offset) => {
      const found = locate(root, path);
      const { node } = found;
      if (!found.complete || !isScalar(node) || typeof node.value !== 'string') return lineOfNode(found.keyNode ?? node);
      // A one-line value is on its own line, also when written below its key.
      if (node.type !== 'BLOCK_LITERAL') return lineOfNode(node.value.includes('\n') ? (found.keyNode ?? node) : node);
      // A literal block's text starts on the line after its `|` indicator and keeps its line breaks.
      // JSONata positions point just past the failing token, which for "unexpected end" is past the
      // final line break: the line is the one of the last character before the position.
      const breaksBefore = node.value.slice(0, offset).trimEnd().split('\n').length - 1;
      return lineOfNode(node) + 1 + breaksBefore;
    },
  };
}

interface Located {
  node: Node;
  /** Key of the last map entry on the path: its line is the one people look for. */
  keyNode?: Node;
  complete: boolean;
}

function locate(root: Node, path: readonly PathSegment[]): Located {
  let current: Located = { node: root, complete: true };
  for (const segment of path) {
    const { node } = current;
    if (isMap(node)) {
      const pair = node.items.find((item) => keyText(item.key) === String(segment));
      if (!pair || !pair.value) return { ...current, keyNode: (pair?.key as Node | undefined) ?? current.keyNode, complete: false };
      current = { node: pair.value as Node, keyNode: pair.key as Node, complete: true };
    } else if (isSeq(node) && typeof segment === 'number' && node.items[segment]) {
      current = { node: node.items[segment] as Node, complete: true };
    } else {
      return { ...current, complete: false };
    }
  }
  return current;
}

function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

function toPlainValue(doc: Document): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

/** yaml's messages repeat the position and quote the source; the file:line prefix already says where. */
function firstLine(message: string): string {
  return (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?$/, '');
}
