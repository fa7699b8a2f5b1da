import { describe, expect, it } from 'vitest';
import { eventColumns } from '../../../src/ingest/event-columns.js';

const columns = (result: Record<string, unknown>) => eventColumns({ event: 'transfer:succeeded', result: { id: 't-1', ...result } }, 'valid');

describe('the amount column at ingest', () => {
  it.each([
    [{ totalPriceUsd: 104.37 }, 104.37],
    [{ totalPriceUsd: 0 }, 0],
    [{ totalPriceUsd: '104.37' }, null],
    [{ totalPriceUsd: Number.POSITIVE_INFINITY }, null],
    [{ totalPriceUsd: null }, null],
    [{}, null],
  ])('result %j gives %s', (result, amount) => {
    expect(columns(result).totalPriceUsd).toBe(amount);
  });
});
