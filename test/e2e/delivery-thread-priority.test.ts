import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServeProcess } from '../helpers/cli-process.js';
import { postSigned, send } from '../helpers/http.js';
import { eventually, rulesDirWith } from '../helpers/rules.js';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

/** The nice value of each thread of a process, by thread id (field 19 of /proc/PID/task/TID/stat). */
function threadNiceValues(pid: number): Map<number, number> {
  const nice = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields are counted from its closing one (field 2).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    nice.set(Number(tid), Number(fields[19 - 3]));
  }
  return nice;
}

const ADMIN_TOKEN = 'priority-test-admin-token-0123456789';
// A delivery planned an hour ahead: the thread has something to deliver (it starts only then) and sends nothing.
const HOLD_RULE = 'id: hold\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9/\nretry:\n  schedule: [1h]\n';

/** `hookrelay serve` with its delivery thread running (a webhook leaves a delivery pending). */
async function serveWith(configYaml: string) {
  const configFile = join(makeTempDir(), 'hookrelay.yaml');
  writeFileSync(configFile, configYaml);
  const serve = await startServeProcess({ HOOKRELAY_CONFIG: configFile, HOOKRELAY_DATA_DIR: makeTempDir(), HOOKRELAY_RULES_DIR: rulesDirWith({ 'hold.yaml': HOLD_RULE }), HOOKRELAY_SECRET: 's', HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN });
  expect((await postSigned(`${serve.url}/webhooks/checkout`, sampleTransferSucceeded(), 's')).status).toBe(200);
  await eventually(async () => {
    const readiness = await send(`${serve.url}/admin/api/readiness`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    return (readiness.json as { checks?: { delivery?: string } }).checks?.delivery === 'thread';
  }, 10_000, 'the delivery thread started');
  return serve;
}

describe('the delivery thread yields the cores to acknowledgements', () => {
  it('runs at nice 10 by default, and only that thread: the receiver and every other thread keep nice 0', async () => {
    const serve = await serveWith('delivery:\n  thread: true\n');
    try {
      const pid = serve.child.pid!;
      const niced = await eventually(() => {
        const values = [...threadNiceValues(pid)].filter(([, nice]) => nice !== 0);
        return values.length > 0 ? values : null;
      }, 10_000, 'a thread at a lower priority');
      expect(niced).toHaveLength(1);
      expect(niced[0]![1]).toBe(10);
      expect(niced[0]![0]).not.toBe(pid); // not the main thread
      expect(threadNiceValues(pid).get(pid)).toBe(0);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('takes its nice value from delivery.threadNice, and 0 leaves every thread at the priority of the process', async () => {
    const custom = await serveWith('delivery:\n  threadNice: 4\n');
    const even = await serveWith('delivery:\n  threadNice: 0\n');
    try {
      const niced = await eventually(() => {
        const values = [...threadNiceValues(custom.child.pid!).values()].filter((nice) => nice !== 0);
        return values.length > 0 ? values : null;
      }, 10_000, 'a thread at nice 4');
      expect(niced).toEqual([4]);
      // The delivery thread has started (readiness said so), at the process's priority.
      expect(threadNiceValues(even.child.pid!).size).toBeGreaterThan(1);
      expect([...threadNiceValues(even.child.pid!).values()].every((nice) => nice === 0)).toBe(true);
    } finally {
      for (const serve of [custom, even]) serve.child.kill('SIGTERM');
      await Promise.all([custom.exited, even.exited]);
    }
  });
});
