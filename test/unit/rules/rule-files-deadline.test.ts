import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readRegularFile } from '../../../src/rules/regular-file.js';
import { overdueRuleReads, readRuleFiles } from '../../../src/rules/rule-files.js';
import { exitProcess } from '../../../src/commands/process-exit.js';
import { RuleSetWatcher } from '../../../src/rules/watcher.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { ruleYaml } from './rule-dir-fixture.js';

// A file system that does not answer for `stuck.yaml` (a hung network mount) until the test ends, the real one otherwise.
const stuck = vi.hoisted(() => {
  const waiting: (() => void)[] = [];
  return { waiting, answerAll: () => waiting.splice(0).forEach((answer) => answer()) };
});
vi.mock('../../../src/rules/regular-file.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/rules/regular-file.js')>();
  return {
    readRegularFile: vi.fn((path: string, maxBytes: number) =>
      path.endsWith('stuck.yaml') ? new Promise((resolve) => stuck.waiting.push(() => resolve({ error: 'answered late' }))) : real.readRegularFile(path, maxBytes),
    ),
  };
});

// Long enough for a real read on a busy machine; the stuck one is reported when it runs out.
const LIMITS = { maxFileBytes: 1024 * 1024, readTimeoutMs: 1_000 };
const silent = { info: () => {}, warn: () => {}, error: () => {} };

afterEach(async () => {
  stuck.answerAll();
  await new Promise((resolve) => setImmediate(resolve));
  vi.mocked(readRegularFile).mockClear();
  vi.restoreAllMocks();
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
      ['stuck.yaml', 'not read: the file system did not answer within 1000 ms'],
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
      expect(watcher.status().lastError?.errors).toEqual([`stuck.yaml:1: not read: the file system did not answer within 1000 ms`]);
      expect(watcher.current().rules.map((rule) => rule.id)).toEqual(['a']);
    } finally {
      watcher.close();
    }
  });

  it('makes the process end itself with SIGKILL while a read is stuck, since a normal exit would wait for it', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true);
    exitProcess(0);
    expect(exit).toHaveBeenCalledWith(0);
    expect(kill).not.toHaveBeenCalled();
    exit.mockClear();

    const dir = makeTempDir();
    writeFileSync(join(dir, 'stuck.yaml'), ruleYaml('stuck'));
    await readRuleFiles(dir, LIMITS);
    expect(overdueRuleReads()).toBe(1);
    const reported: number[] = [];
    exitProcess(0, (reads) => reported.push(reads));
    expect(exit).not.toHaveBeenCalled();
    expect(kill).toHaveBeenCalledWith(process.pid, 'SIGKILL');
    expect(reported).toEqual([1]);

    // Once the file system answers, a normal exit is safe again.
    stuck.answerAll();
    await new Promise((resolve) => setImmediate(resolve));
    expect(overdueRuleReads()).toBe(0);
  });
});
