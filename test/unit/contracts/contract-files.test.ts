import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadContracts } from '../../../src/contracts/contract-files.js';
import { ContractWatcher } from '../../../src/contracts/contract-watcher.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const header = { 'x-hookrelay-source': 'checkout', 'x-hookrelay-event': 'transfer:succeeded', 'x-hookrelay-mode': 'warn' };
const quiet = { info: () => {}, error: () => {} };

function dirWith(files: Record<string, unknown>): string {
  const dir = makeTempDir();
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  return dir;
}

describe('pinned contract files', () => {
  it('a missing directory means no contracts', async () => {
    const load = await loadContracts(join(makeTempDir(), 'absent'));
    expect(load.ok && load.contracts.size).toBe(0);
  });

  it('checks a body against the contract of its (source, event) only', async () => {
    const load = await loadContracts(dirWith({ 'a.schema.json': { ...header, type: 'object', required: ['result'], properties: { result: { type: 'object', required: ['vatUsd'] } } }, 'notes.txt': 'ignored' }));
    if (!load.ok) throw new Error(load.errors.join('\n'));
    expect(load.contracts.check('checkout', 'transfer:succeeded', { result: { vatUsd: 1 } })).toBeNull();
    expect(load.contracts.check('checkout', 'other', { result: {} })).toBeNull();
    expect(load.contracts.check('checkout', 'transfer:succeeded', { result: {} })).toEqual({
      file: 'a.schema.json', mode: 'warn', issues: [{ path: 'result', message: "must have required property 'vatUsd'", code: 'required' }],
    });
  });

  it('refuses bad files as file:path: message, every problem at once', async () => {
    const load = await loadContracts(dirWith({
      'a.schema.json': '{ not json',
      'b.schema.json': { ...header, 'x-hookrelay-mode': 'hold' },
      'c.schema.json': { ...header, 'x-hookrelay-source': '' },
      'd.schema.json': { ...header, type: 'nonsense' },
      'e.schema.json': { ...header, type: 'string', pattern: '(a)\\1' },
    }));
    expect(load.ok).toBe(false);
    const errors = load.ok ? [] : load.errors;
    expect(errors[0]).toMatch(/^a\.schema\.json: not valid JSON: /);
    expect(errors[1]).toBe('b.schema.json:x-hookrelay-mode: must be "warn" or "quarantine"');
    expect(errors[2]).toBe('c.schema.json:x-hookrelay-source: required, a non-empty string');
    expect(errors[3]).toMatch(/^d\.schema\.json:\(schema\): /);
    expect(errors[4]).toMatch(/^e\.schema\.json:\(schema\): pattern /);
  });

  it('refuses two contracts for one (source, event)', async () => {
    const load = await loadContracts(dirWith({ 'a.schema.json': header, 'b.schema.json': header }));
    expect(load.ok ? [] : load.errors).toEqual(['b.schema.json:x-hookrelay-event: (checkout, transfer:succeeded) is already pinned by a.schema.json']);
  });

  it('reloads a changed directory; a bad edit keeps the last good contracts', async () => {
    const dir = dirWith({ 'a.schema.json': header });
    const watcher = await ContractWatcher.start(dir, quiet, 0);
    try {
      expect(watcher.current().contractFor('checkout', 'transfer:succeeded')?.mode).toBe('warn');
      writeFileSync(join(dir, 'a.schema.json'), JSON.stringify({ ...header, 'x-hookrelay-mode': 'quarantine', description: 'changes the size' }));
      await watcher.check();
      expect(watcher.current().contractFor('checkout', 'transfer:succeeded')?.mode).toBe('quarantine');
      writeFileSync(join(dir, 'a.schema.json'), '{ broken');
      await watcher.check();
      expect(watcher.current().contractFor('checkout', 'transfer:succeeded')?.mode).toBe('quarantine');
      expect(watcher.lastError).toEqual([expect.stringMatching(/^a\.schema\.json: not valid JSON/)]);
    } finally {
      watcher.close();
    }
  });

  it('an invalid first load refuses to start with invalid_contracts', async () => {
    await expect(ContractWatcher.start(dirWith({ 'a.schema.json': '[]' }), quiet, 0)).rejects.toMatchObject({ code: 'invalid_contracts' });
  });
});
