import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRuleSet } from '../../../src/rules/loader.js';
import { formatRuleFileError } from '../../../src/rules/rule-file-error.js';
import { readRuleFiles } from '../../../src/rules/rule-files.js';
import type { LoadResult } from '../../../src/rules/types.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { ruleYaml } from './rule-dir-fixture.js';

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  servers = [];
  removeTempDirs();
});

function errorsOf(result: LoadResult, dir: string): string[] {
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.errors.map(formatRuleFileError).map((line) => line.replaceAll(`${dir}/`, 'rules/'));
}

const SECRET_LINES = 'DB_PASSWORD: hunter2-0f9e8d\nAPI_KEY: sk_live_51Habcdef\n';

describe('reading the rules directory', () => {
  it('reports a FIFO named like a rule file, by name and type, without opening it for a writer', async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, 'a.yaml'), ruleYaml('a'));
    execFileSync('mkfifo', [join(dir, 'x.yaml')]);
    // Without a writer, a blocking open would never return: this call would not settle.
    const errors = errorsOf(await loadRuleSet(dir, {}), dir);
    expect(errors).toEqual(['x.yaml:1: skipped: it is a FIFO (named pipe), not a regular file (only regular files, or symlinks to them, are read as rules)']);
  });

  it('reports a socket, a directory and a symlink to a device the same way', async () => {
    const dir = makeTempDir();
    const socketPath = join(dir, 's.yaml');
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    mkdirSync(join(dir, 'd.yaml'));
    symlinkSync('/dev/zero', join(dir, 'z.yaml'));
    expect(errorsOf(await loadRuleSet(dir, {}), dir)).toEqual([
      'd.yaml:1: skipped: it is a directory, not a regular file (only regular files, or symlinks to them, are read as rules)',
      's.yaml:1: skipped: it is a socket, not a regular file (only regular files, or symlinks to them, are read as rules)',
      'z.yaml:1: skipped: it is a character device, not a regular file (only regular files, or symlinks to them, are read as rules)',
    ]);
  });

  it('refuses a file over the size limit without reading it', async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, 'big.yaml'), `${ruleYaml('big')}description: "${'x'.repeat(2_000)}"\n`);
    expect(errorsOf(await loadRuleSet(dir, {}, 1_024), dir)).toEqual([
      expect.stringMatching(/^big\.yaml:1: skipped: its \d+ bytes are over the 1024-byte limit for a rule file \(HOOKRELAY_RULES_MAX_FILE_BYTES\)$/),
    ]);
    const result = await loadRuleSet(dir, {});
    expect(result.ok).toBe(true);
  });

  it('reads symlinks to regular files: the layout of a Kubernetes ConfigMap mount, before and after an update', async () => {
    const dir = makeTempDir();
    // kubelet: files in a timestamped dir, `..data` a symlink to it, each name a symlink through `..data`.
    mkdirSync(join(dir, '..2026_11_01_10_00_00.1'));
    writeFileSync(join(dir, '..2026_11_01_10_00_00.1', 'a.yaml'), ruleYaml('a'));
    symlinkSync('..2026_11_01_10_00_00.1', join(dir, '..data'));
    symlinkSync('..data/a.yaml', join(dir, 'a.yaml'));
    const first = await loadRuleSet(dir, {});
    expect(first.ok && first.ruleSet.rules.map((rule) => [rule.id, rule.enabled])).toEqual([['a', true]]);

    // An update writes a new dir and swaps `..data` atomically.
    mkdirSync(join(dir, '..2026_11_01_10_05_00.2'));
    writeFileSync(join(dir, '..2026_11_01_10_05_00.2', 'a.yaml'), ruleYaml('a', 'enabled: false\n'));
    symlinkSync('..2026_11_01_10_05_00.2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    const second = await loadRuleSet(dir, {});
    expect(second.ok && second.ruleSet.rules.map((rule) => [rule.id, rule.enabled])).toEqual([['a', false]]);
    expect(second.ok && first.ok && second.ruleSet.hash).not.toBe(first.ok && first.ruleSet.hash);
    expect(second.ok && second.ruleSet.files).toEqual(['a.yaml']);
  });

  it('names a broken symlink as unreadable', async () => {
    const dir = makeTempDir();
    symlinkSync(join(dir, 'gone.txt'), join(dir, 'a.yaml'));
    const snapshot = await readRuleFiles(dir);
    expect(snapshot.files).toEqual([{ name: 'a.yaml', text: '', readError: expect.stringMatching(/^cannot read the file: ENOENT/) }]);
  });
});

describe('files that are not rules', () => {
  it('never quotes a symlinked secrets file, in any shape', async () => {
    const outside = makeTempDir();
    const dir = makeTempDir();
    const files: Record<string, string> = {
      'keys.yaml': SECRET_LINES,
      'dotenv.yaml': 'DB_PASSWORD=hunter2-0f9e8d\nAPI_KEY=sk_live_51Habcdef\n',
      'list.yaml': '- hunter2-0f9e8d\n- sk_live_51Habcdef\n',
      'alias.yaml': 'password: *hunter2-0f9e8d\n',
      'broken.yaml': '"sk_live_51Habcdef\\q": hunter2-0f9e8d\n',
      'block.yaml': 'key: |sk_live_51Habcdef\n  hunter2-0f9e8d\n',
    };
    for (const [name, text] of Object.entries(files)) {
      writeFileSync(join(outside, name), text);
      symlinkSync(join(outside, name), join(dir, name));
    }
    const errors = errorsOf(await loadRuleSet(dir, {}), dir);
    expect(errors).toEqual([
      'alias.yaml:1: not a rule file (its content is not shown): none of its keys is a rule key (id, on, where, to, ...)',
      expect.stringMatching(/^block\.yaml:1: not a rule file \(its content is not shown\): not valid YAML \([A-Z_]+\) and no rule key found$/),
      'broken.yaml:1: not a rule file (its content is not shown): not valid YAML (BAD_DQ_ESCAPE) and no rule key found',
      'dotenv.yaml:1: not a rule file (its content is not shown): it is a string, not a mapping of rule keys (id, on, where, to, ...)',
      'keys.yaml:1: not a rule file (its content is not shown): none of its keys is a rule key (id, on, where, to, ...)',
      'list.yaml:1: not a rule file (its content is not shown): it is a list with no rule in it',
    ]);
    for (const secret of ['hunter2', 'sk_live', 'DB_PASSWORD', 'API_KEY', 'password']) expect(errors.join('\n')).not.toContain(secret);
  });

  it('still reports a rule file in full, misspelt keys and all, and names a list item that is not a rule', async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, 'a.yaml'), 'id: a\non: [transfer:succeeded]\nto: { url: "https://hooks.example.com/a" }\ndescripton: x\nextra: 1\n');
    writeFileSync(join(dir, 'b.yaml'), `- hunter2-0f9e8d\n- ${ruleYaml('b').trimEnd().replaceAll('\n', '\n  ')}\n`);
    expect(errorsOf(await loadRuleSet(dir, {}), dir)).toEqual([
      'a.yaml:4: unknown key "descripton" (did you mean "description"?)',
      'a.yaml:5: unknown key "extra"',
      'b.yaml:1: list item [0] is not a rule (its content is not shown): it is a string, not a mapping of rule keys (id, on, where, to, ...)',
    ]);
  });
});
