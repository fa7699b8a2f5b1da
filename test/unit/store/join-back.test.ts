import { describe, expect, it } from 'vitest';
import { joinBackOfKeys, rejoinOrder } from '../../../src/store/join-back.js';

describe('joining the back of an ordered key', () => {
  it('rejoins rows in ascending id order, each once, keeping their other fields', () => {
    const rows = [{ id: 9, dueAt: 1 }, { id: 3, dueAt: 2 }, { id: 9, dueAt: 1 }, { id: 5, dueAt: 0 }];
    expect(rejoinOrder(rows)).toEqual([{ id: 3, dueAt: 2 }, { id: 5, dueAt: 0 }, { id: 9, dueAt: 1 }]);
  });

  it('leaves the input as given', () => {
    const rows = [{ id: 2 }, { id: 1 }];
    rejoinOrder(rows);
    expect(rows).toEqual([{ id: 2 }, { id: 1 }]);
  });

  it('asks the backend for one back place per id, in rejoin order', () => {
    const taken: number[] = [];
    joinBackOfKeys([7, 2, 7, 4], (id) => taken.push(id));
    expect(taken).toEqual([2, 4, 7]);
  });

  it('asks for nothing when no row rejoins', () => {
    const taken: number[] = [];
    joinBackOfKeys([], (id) => taken.push(id));
    expect(taken).toEqual([]);
  });
});
