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

export function parseRuleFile(text: string): ParsedRuleFile {
  const lineCounter = new LineCounter();
  const lineAt = (offset: number) => Math.max(1, lineCounter.linePos(offset).line);
  const parsed: ParsedRuleFile = { rules: [], problems: [] };

  for (const doc of parseAllDocuments(text, { lineCounter })) {
    if (doc.errors.length > 0) {
      for (const error of doc.errors) {
        parsed.problems.push({ line: error.linePos?.[0].line ?? 1, message: firstLine(error.message) });
      }
      continue;
    }
    const contents = doc.contents as Node | null;
    if (contents === null || (isScalar(contents) && contents.value === null)) continue; // empty or comments only
    const value = toPlainValue(doc);
    if (!value.ok) {
      parsed.problems.push({ line: lineAt(contents.range?.[0] ?? 0), message: value.message });
      continue;
    }
    if (isSeq(contents)) {
      contents.items.forEach((item, index) => {
        parsed.rules.push(ruleSource((value.value as unknown[])[index], item as Node, [index], lineAt));
      });
    } else {
      parsed.rules.push(ruleSource(value.value, contents, [], lineAt));
    }
  }
  return parsed;
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
      if (!found.complete || !isScalar(node) || node.type !== 'BLOCK_LITERAL' || typeof node.value !== 'string') {
        return lineOfNode(found.keyNode ?? node);
      }
      // A literal block's text starts on the line after its `|` indicator and keeps its line breaks.
      const breaksBefore = node.value.slice(0, offset).split('\n').length - 1;
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
