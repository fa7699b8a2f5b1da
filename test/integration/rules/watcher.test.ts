import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HookrelayError } from '../../../src/errors.js';
import { RuleSetWatcher, type RuleSetError, type RuleSetWatcherOptions } from '../../../src/rules/watcher.js';
import type { RuleSet } from '../../../src/rules/types.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { makeRuleDir, ruleYaml, type RuleDir } from '../../unit/rules/rule-dir-fixture.js';

let ruleDir: RuleDir;
let watcher: RuleSetWatcher | undefined;
afterEach(() => {
  watcher?.close();
  watcher = undefined;
  removeTempDirs();
});

function recordingLogger() {
  const lines: { level: string; message: string; details: object }[] = [];
  const at = (level: string) => (details: object, message: string) => void lines.push({ level, message, details });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

async function startWatcher(options: Partial<RuleSetWatcherOptions> = {}) {
  const { lines, logger } = recordingLogger();
  watcher = await RuleSetWatcher.start({ dir: ruleDir.dir, env: {}, logger, debounceMs: 50, pollIntervalMs: 200, ...options });
  return { watcher, lines };
}

function next(w: RuleSetWatcher, event: 'reload'): Promise<RuleSet>;
function next(w: RuleSetWatcher, event: 'error'): Promise<RuleSetError>;
function next(w: RuleSetWatcher, event: 'reload' | 'error'): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} event within 3s`)), 3_000);
    const listener = (value: unknown) => {
      clearTimeout(timer);
      w.off(event, listener);
      resolve(value);
    };
    w.on(event, listener);
  });
}

describe('RuleSetWatcher', () => {
  it('refuses to start on invalid rules, listing every problem', async () => {
    ruleDir = await makeRuleDir({ 'a.yaml': ruleYaml('a'), 'b.yaml': ruleYaml('a'), 'c.yaml': ruleYaml('c', 'timeout: soon\n') });
    const failure = await RuleSetWatcher.start({ dir: ruleDir.dir, env: {}, logger: recordingLogger().logger }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(HookrelayError);
    expect((failure as HookrelayError).code).toBe('invalid_rules');
    expect((failure as HookrelayError).details).toEqual([
      `${ruleDir.file('b.yaml')}:1 id: duplicate id "a" (also defined at ${ruleDir.file('a.yaml')}:1)`,
      `${ruleDir.file('c.yaml')}:5 timeout: invalid duration "soon" (use e.g. 500ms, 10s, 5m, 2h)`,
    ]);
    expect((failure as Error).message).toContain('Invalid rules (2 problems):');
  });

  it('picks up a good edit by polling alone, and logs it', async () => {
    ruleDir = await makeRuleDir({ 'a.yaml': ruleYaml('a') });
    const { watcher, lines } = await startWatcher({ watch: false });
    const before = watcher.status();
    expect(before).toMatchObject({ ruleCount: 1, lastError: null });

    const reloaded = next(watcher, 'reload');
    await ruleDir.write('b.yaml', ruleYaml('b'));
    const ruleSet = await reloaded;
    expect(ruleSet.rules.map((rule) => rule.id)).toEqual(['a', 'b']);
    expect(watcher.current()).toBe(ruleSet);
    expect(watcher.status()).toMatchObject({ ruleCount: 2, lastError: null, hash: ruleSet.hash });
    expect(ruleSet.hash).not.toBe(before.hash);
    expect(lines.map((line) => line.message)).toEqual(['rules loaded', 'rules reloaded']);
  });

  it('picks up an edit through fs.watch well before the poll', async () => {
    ruleDir = await makeRuleDir({ 'a.yaml': ruleYaml('a') });
    const { watcher } = await startWatcher({ pollIntervalMs: 60_000 });
    const reloaded = next(watcher, 'reload');
    await ruleDir.write('a.yaml', ruleYaml('a', 'enabled: false\n'));
    expect((await reloaded).rules[0]?.enabled).toBe(false);
  });

  it('keeps the last good rules on a bad edit, reports it once, and clears it on a fix', async () => {
    ruleDir = await makeRuleDir({ 'a.yaml': ruleYaml('a') });
    const { watcher, lines } = await startWatcher();
    const good = watcher.current();
    let errorEvents = 0;
    watcher.on('error', () => errorEvents++);

    const failed = next(watcher, 'error');
    // Two mistakes of different kinds (a shape error and a query error): both are reported at once.
    await ruleDir.write('a.yaml', ruleYaml('a', 'where: { result.totalPriceUsd: { $gtee: 100 } }\ntimeout: soon\n'));
    const error = await failed;
    const expected = [
      `${ruleDir.file('a.yaml')}:5 where.result.totalPriceUsd: unknown operator $gtee (did you mean "$gte"?)`,
      `${ruleDir.file('a.yaml')}:6 timeout: invalid duration "soon" (use e.g. 500ms, 10s, 5m, 2h)`,
    ];
    expect(error.errors).toEqual(expected);
    expect(watcher.current()).toBe(good);
    expect(watcher.status()).toMatchObject({ hash: good.hash, ruleCount: 1, lastError: { errors: expected } });
    expect(lines.at(-1)).toMatchObject({ level: 'error', details: { errors: expected, keptHash: good.hash } });

    await watcher.check(); // the same bad files again: nothing new to report
    expect(errorEvents).toBe(1);

    const reloaded = next(watcher, 'reload');
    await ruleDir.write('a.yaml', ruleYaml('a', 'where: { result.totalPriceUsd: { $gte: 100 } }\n'));
    const fixed = await reloaded;
    expect(watcher.current()).toBe(fixed);
    expect(watcher.status().lastError).toBeNull();
  });

  it('reports a FIFO and a symlinked secrets file appearing in the directory, by name and never by content', async () => {
    ruleDir = await makeRuleDir({ 'a.yaml': ruleYaml('a') });
    const { watcher, lines } = await startWatcher({ watch: false });
    const good = watcher.current();
    execFileSync('mkfifo', [join(ruleDir.dir, 'x.yaml')]);
    const secrets = join(makeTempDir(), 'secrets.env');
    await writeFile(secrets, 'DB_PASSWORD: hunter2-0f9e8d\nAPI_KEY: sk_live_51Habcdef\n');
    await symlink(secrets, join(ruleDir.dir, 'secrets.yaml'));

    await watcher.check();
    const expected = [
      `secrets.yaml:1: not a rule file (its content is not shown): none of its keys is a rule key (id, on, where, to, ...)`,
      `x.yaml:1: skipped: it is a FIFO (named pipe), not a regular file (only regular files, or symlinks to them, are read as rules)`,
    ];
    expect(watcher.status().lastError?.errors).toEqual(expected);
    expect(watcher.current()).toBe(good);
    const logged = JSON.stringify(lines);
    for (const secret of ['hunter2', 'sk_live', 'DB_PASSWORD', 'API_KEY']) expect(logged).not.toContain(secret);
  });

  it('starts on a missing directory with a warning and loads it once it appears', async () => {
    ruleDir = await makeRuleDir();
    const dir = join(ruleDir.dir, 'rules');
    const { watcher } = await startWatcher({ dir });
    expect(watcher.status()).toMatchObject({ ruleCount: 0, warnings: [`rules directory ${dir} does not exist; no rules are loaded`] });

    const reloaded = next(watcher, 'reload');
    await mkdir(dir);
    await writeFile(join(dir, 'a.yaml'), ruleYaml('a'));
    expect((await reloaded).rules.map((rule) => rule.id)).toEqual(['a']);
    expect(watcher.status().warnings).toEqual([]);
  });

  it('stops reloading once closed', async () => {
    ruleDir = await makeRuleDir({ 'a.yaml': ruleYaml('a') });
    const { watcher } = await startWatcher();
    const before = watcher.current();
    watcher.close();
    await ruleDir.write('b.yaml', ruleYaml('b'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(watcher.current()).toBe(before);
  });

  it('keeps each rule set (start and reload) before using it; a set that cannot be kept is not used until it can be', async () => {
    ruleDir = await makeRuleDir({ 'a.yaml': ruleYaml('a') });
    const kept: string[] = [];
    let refuse = false;
    const keep = async (ruleSet: RuleSet): Promise<void> => {
      if (refuse) throw new Error('store unavailable');
      kept.push(ruleSet.hash);
    };
    const { watcher: w, lines } = await startWatcher({ keep, watch: false });
    const first = w.current().hash;
    expect(kept).toEqual([first]);

    refuse = true;
    await ruleDir.write('b.yaml', ruleYaml('b'));
    await w.check();
    expect(w.current().hash).toBe(first); // not kept, so not used
    expect(lines.some((l) => l.level === 'error' && /could not be stored/.test(l.message))).toBe(true);

    refuse = false;
    await w.check();
    expect(w.current().rules.map((r) => r.id)).toEqual(['a', 'b']);
    expect(kept).toEqual([first, w.current().hash]);
  });
});
