import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readRegularFile } from '../../../src/rules/regular-file.js';
import { readRuleFiles } from '../../../src/rules/rule-files.js';
import { RuleSetWatcher } from '../../../src/rules/watcher.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { ruleYaml } from './rule-dir-fixture.js';

// A file system that never answers for `stuck.yaml` (a hung network mount), the real one otherwise.
vi.mock('../../../src/rules/regular-file.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/rules/regular-file.js')>();
  return {
    readRegularFile: vi.fn((path: string, maxBytes: number) => (path.endsWith('stuck.yaml') ? new Promise(() => {}) : real.readRegularFile(path, maxBytes))),
  };
});

const LIMITS = { maxFileBytes: 1024 * 1024, readTimeoutMs: 50 };
const silent = { info: () => {}, warn: () => {}, error: () => {} };

afterEach(() => {
  vi.mocked(readRegularFile).mockClear();
  removeTempDirs();
});

describe('a rule file the file system does not answer for', () => {
  it('is reported after the deadline, and a later read waits on the same read instead of starting another', async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, 'a.yaml'), ruleYaml('a'));
    writeFileSync(join(dir, 'stuck.yaml'), ruleYaml('stuck'));
    const stuckReads = () => vi.mocked(readRegularFile).mock.calls.filter(([path]) => path.endsWith('stuck.yaml')).length;

    const first = await readRuleFiles(dir, LIMITS);
    expect(first.files.map((file) => [file.name, file.readError ?? 'read'])).toEqual([
      ['a.yaml', 'read'],
      ['stuck.yaml', 'not read: the file system did not answer within 50 ms'],
    ]);
    await readRuleFiles(dir, LIMITS);
    expect(stuckReads()).toBe(1);
  });

  it('makes hot reload report the file instead of waiting for it with no error', async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, 'a.yaml'), ruleYaml('a'));
    const watcher = await RuleSetWatcher.start({ dir, env: {}, logger: silent, limits: LIMITS, watch: false, pollIntervalMs: 60_000 });
    try {
      writeFileSync(join(dir, 'stuck.yaml'), ruleYaml('stuck'));
      await watcher.check();
      expect(watcher.status().lastError?.errors).toEqual([`${join(dir, 'stuck.yaml')}:1: not read: the file system did not answer within 50 ms`]);
      expect(watcher.current().rules.map((rule) => rule.id)).toEqual(['a']);
    } finally {
      watcher.close();
    }
  });
});
