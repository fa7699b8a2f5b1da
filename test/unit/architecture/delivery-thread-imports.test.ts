import { describe, expect, it } from 'vitest';
import { packagesLoadedBy } from '../../helpers/import-graph.js';

// The compiled code: the thread runs the build (`npm test` builds first).
const THREAD_ENTRY = 'dist/delivery/thread/delivery-thread-entry.js';

describe('the delivery thread', () => {
  it('loads the packages that send and record, and neither the YAML parser nor the schema library', () => {
    const packages = packagesLoadedBy(THREAD_ENTRY);
    // The walk follows the entry's imports: the packages it needs to match, transform, send and log.
    for (const needed of ['undici', 'sift', 'jsonata', 'pino']) expect([needed, packages.has(needed)]).toEqual([needed, true]);
    // It builds the rules the receiver read and validated (rules/rule-set-message.ts).
    for (const unneeded of ['zod', 'yaml', 'express']) expect([unneeded, packages.has(unneeded)]).toEqual([unneeded, false]);
  });
});
