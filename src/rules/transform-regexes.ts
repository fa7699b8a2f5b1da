import { compileLinearRegex } from './regex-engine.js';

/**
 * The regex literals of a parsed JSONata expression that the linear-time engine cannot run, found at load
 * so a rule file is refused with the line of the literal instead of failing on each event. JSONata has no
 * way to build a regex from a string at run time, so its literals are every regex a transform can run.
 */

export interface RefusedRegexLiteral {
  /** JSONata's character offset of the literal (just after it). */
  position: number;
  message: string;
}

interface RegexNode {
  type: 'regex';
  value: RegExp;
  position?: number;
}

const isRegexNode = (node: object): node is RegexNode => (node as { type?: unknown }).type === 'regex' && (node as { value?: unknown }).value instanceof RegExp;

export function refusedRegexLiterals(ast: unknown): RefusedRegexLiteral[] {
  const refused: RefusedRegexLiteral[] = [];
  const seen = new Set<object>();
  // Every property is walked (arguments, steps, predicates, lambda bodies, object pairs...), not a list of
  // node kinds that a later JSONata could extend; parent slots make the tree a graph, hence `seen`.
  const stack: unknown[] = [ast];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null || node instanceof RegExp || seen.has(node)) continue;
    seen.add(node);
    if (isRegexNode(node)) {
      const { source, flags } = node.value;
      const compiled = compileLinearRegex(source, flags.replace('g', ''));
      if (!compiled.ok) refused.push({ position: node.position ?? 0, message: `regular expression /${source}/ ${compiled.message}` });
      continue;
    }
    stack.push(...(Array.isArray(node) ? node : Object.values(node)));
  }
  return refused.sort((a, b) => a.position - b.position);
}
