import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServeProcess } from '../helpers/cli-process.js';
import { send } from '../helpers/http.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { ruleYaml } from '../unit/rules/rule-dir-fixture.js';

afterAll(() => removeTempDirs());

const ADMIN_TOKEN = 'rules-dir-special-files-token';

describe('hookrelay serve with a FIFO and a secrets symlink in its rules directory', () => {
  it('reports both without their content, keeps its rules, and exits on SIGTERM', async () => {
    const rulesDir = makeTempDir();
    writeFileSync(join(rulesDir, 'a.yaml'), ruleYaml('a'));
    const server = await startServeProcess({ HOOKRELAY_DATA_DIR: makeTempDir(), HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_SECRET: 's', HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN });
    try {
      // A FIFO without a writer: a blocking open() of it never returns.
      execFileSync('mkfifo', [join(rulesDir, 'x.yaml')]);
      const secrets = join(makeTempDir(), 'secrets.yaml');
      writeFileSync(secrets, 'DB_PASSWORD: hunter2-0f9e8d\n');
      symlinkSync(secrets, join(rulesDir, 'secrets.yaml'));

      const reported = await server.waitForLog((line) => line.msg === 'rule files are invalid; keeping the last good rules' && line.errors.length === 2);
      expect(reported.errors).toEqual([
        `secrets.yaml:1: not a rule file (its content is not shown): none of its keys is a rule key (id, on, where, to, ...)`,
        `x.yaml:1: skipped: it is a FIFO (named pipe), not a regular file (only regular files, or symlinks to them, are read as rules)`,
      ]);
      const rules = await send(`${server.url}/admin/api/rules`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(rules.status).toBe(200);
      expect(JSON.stringify(rules.json)).toContain('FIFO (named pipe)');
      expect(JSON.stringify(rules.json)).not.toContain('hunter2');
      expect(server.stdout()).not.toContain('hunter2');

      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
    } finally {
      server.child.kill('SIGKILL');
    }
  });
});
