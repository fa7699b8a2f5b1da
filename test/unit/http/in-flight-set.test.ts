import { describe, expect, it } from 'vitest';
import { InFlightSet } from '../../../src/http/in-flight-set.js';

describe('InFlightSet', () => {
  it('holds what was added until its remover runs, whatever the order', () => {
    const set = new InFlightSet<string>();
    const removers = ['a', 'b', 'c', 'd', 'e'].map((value) => set.add(value));
    removers[0]!();
    removers[4]!();
    removers[2]!();
    expect(set.size).toBe(2);
    expect([...set].sort()).toEqual(['b', 'd']);
    removers[1]!();
    removers[3]!();
    expect(set.size).toBe(0);
    expect([...set]).toEqual([]);
  });

  it('ignores a second removal, which must not remove what took the slot', () => {
    const set = new InFlightSet<string>();
    const removeA = set.add('a');
    set.add('b');
    removeA();
    removeA(); // 'b' now sits where 'a' was
    expect([...set]).toEqual(['b']);
  });

  it('keeps the same value added twice as two members', () => {
    const set = new InFlightSet<string>();
    const first = set.add('x');
    set.add('x');
    first();
    expect([...set]).toEqual(['x']);
  });

  it('can be iterated while members remove themselves', () => {
    const set = new InFlightSet<() => void>();
    const calls: number[] = [];
    for (let i = 0; i < 4; i++) {
      const remove = set.add(() => {
        calls.push(i);
        remove();
      });
    }
    for (const each of set) each();
    expect(calls.sort()).toEqual([0, 1, 2, 3]);
    expect(set.size).toBe(0);
  });
});
