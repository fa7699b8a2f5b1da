import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** file → the files it imports (relative imports only, type-only ones included), paths relative to `root`'s parent. */
export type ImportGraph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The import graph of every .ts file under `root`, read from the source text (what the compiler would resolve). */
export function readImportGraph(root: string): ImportGraph {
  const base = dirname(resolve(root));
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles(resolve(root))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => relative(base, resolve(dirname(file), name.replace(/\.js$/, '.ts'))));
    graph.set(relative(base, file), targets);
  }
  return graph;
}

/** The node a file belongs to one level below `root`: its top folder (`src/rules`) or itself (`src/config.ts`). */
export function topLevelOf(file: string): string {
  return file.split('/').slice(0, 2).join('/');
}

/** The graph between top-level folders and root files: an edge wherever one of their files imports the other's. */
export function folderGraph(graph: ImportGraph): ImportGraph {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = topLevelOf(file);
    const edges = folders.get(from) ?? new Set<string>();
    for (const target of targets) if (topLevelOf(target) !== from) edges.add(topLevelOf(target));
    folders.set(from, edges);
  }
  return new Map([...folders].map(([node, edges]) => [node, [...edges].sort()]));
}

/** Every group of nodes that reach each other (Tarjan's strongly connected components of more than one node, or a self-import). */
export function findCycles(graph: ImportGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)!.includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

const STATIC_IMPORT = /^\s*(?:import|export)\s[^;]*?\sfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm;

/**
 * The packages a compiled module loads when it is imported: its static imports and theirs, followed
 * through relative paths (`import()` expressions, loaded only when they run, are not followed).
 */
export function packagesLoadedBy(compiledFile: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const specifier = (match[1] ?? match[2])!;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
      else if (!specifier.startsWith('node:')) packages.add(specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/'));
    }
  };
  visit(resolve(compiledFile));
  return packages;
}
