import { describe, expect, it } from 'vitest';
import { findCycles, folderGraph, readImportGraph, type ImportGraph } from '../../helpers/import-graph.js';

const graph = readImportGraph('src');

/** Imports from files under `from` into files under `to`, as `file -> target` lines. */
function importsBetween(from: string, to: string): string[] {
  return [...graph].flatMap(([file, targets]) =>
    file.startsWith(`${from}/`) ? targets.filter((target) => target.startsWith(`${to}/`)).map((target) => `${file} -> ${target}`) : [],
  );
}

describe('the import graph of src/', () => {
  it('is read from the sources', () => {
    expect(graph.get('src/commands/local-target.ts')).toContain('src/operations/browse.ts');
    expect(graph.size).toBeGreaterThan(100);
  });

  it('has no import cycle between files', () => {
    expect(findCycles(graph)).toEqual([]);
  });

  it('has no cycle between top-level folders: data flows one way', () => {
    expect(findCycles(folderGraph(graph))).toEqual([]);
  });

  it('front ends sit on operations/ and never import each other', () => {
    expect(importsBetween('src/commands', 'src/admin')).toEqual([]);
    expect(importsBetween('src/admin', 'src/commands')).toEqual([]);
    expect(importsBetween('src/operations', 'src/admin')).toEqual([]);
    expect(importsBetween('src/operations', 'src/commands')).toEqual([]);
  });

  it('commands that work on a store open the one serve would, never a backend directly (store copy names both on purpose)', () => {
    const backends = [...importsBetween('src/commands', 'src/store/sqlite'), ...importsBetween('src/commands', 'src/store/postgres')];
    expect(backends.filter((line) => !line.startsWith('src/commands/store-copy.ts ') && !line.startsWith('src/commands/listen.ts '))).toEqual([]);
  });

  it('rules/ and delivery/ do not import each other both ways', () => {
    expect(importsBetween('src/rules', 'src/delivery')).toEqual([]);
  });
});

describe('findCycles', () => {
  it('finds a cycle through several files and a self-import, and nothing in a tree', () => {
    const cyclic: ImportGraph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(findCycles(cyclic)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(findCycles(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]]))).toEqual([]);
  });
});
