import { execFile } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from '../../../src/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, runCli, type CliProcess } from '../../helpers/cli-process.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { hookrelay, until } from './cli-harness.js';

afterAll(() => removeTempDirs());

const EVENTS = 30_000;
const BATCH = 500;

/** An export file of `count` small events, as `events export` writes them. */
function exportFile(count: number): string {
  const lines = Array.from({ length: count }, (_, i) => {
    const body = Buffer.from(JSON.stringify({ event: 'order:bulk', result: { id: `bulk-${i}`, pad: 'p'.repeat(300) } }));
    return JSON.stringify({
      format: 'hookrelay.event.v1', source: 'checkout', event: 'order:bulk', transferId: `bulk-${i}`, validation: 'unrecognised',
      checkoutId: null, email: null, walletAddress: null, receivedAt: '2025-01-01T00:00:00.000Z', lastReceivedAt: '2025-01-01T00:00:00.000Z',
      receivedCount: 1, headers: { 'content-type': 'application/json' }, bodyBase64: body.toString('base64'),
    });
  });
  const file = join(makeTempDir(), 'bulk.ndjson');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function query<T>(dataDir: string, sql: string, fallback: T): T {
  const path = join(dataDir, 'hookrelay.db');
  if (!existsSync(path)) return fallback;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).get() as T;
  } catch {
    return fallback; // tables not created yet
  } finally {
    db.close();
  }
}

const countEvents = (dataDir: string): number => query(dataDir, 'SELECT count(*) AS n FROM events', { n: 0 }).n;

/** Ctrl-C at a moment of our choosing: freeze the process, queue SIGINT, let it run on. */
function interrupt(proc: CliProcess): void {
  proc.child.kill('SIGSTOP');
  proc.child.kill('SIGINT');
  proc.child.kill('SIGCONT');
}

describe('long operations: Ctrl-C leaves no half-done state, progress only on a terminal', { timeout: 120_000 }, () => {
  let file: string;
  let dataDir: string;

  beforeAll(() => {
    file = exportFile(EVENTS);
    dataDir = makeTempDir();
  });

  it('an interrupted import keeps whole batches only, and running it again finishes the job', async () => {
    const proc = runCli(['events', 'import', file, '--data-dir', dataDir]);
    await until(() => countEvents(dataDir) >= BATCH, 20_000, 'the first batch');
    interrupt(proc);
    const { code } = await proc.exited;
    expect(code).toBe(130);
    const kept = countEvents(dataDir);
    expect(kept % BATCH).toBe(0);
    expect(kept).toBeLessThan(EVENTS);
    expect(proc.stdout()).toContain('interrupted: run the same command again to carry on');

    const resumed = await hookrelay(['events', 'import', file, '--data-dir', dataDir, '--json']);
    expect(resumed.json).toEqual({ imported: EVENTS - kept, duplicates: kept, seenBefore: 0, interrupted: false, unconfiguredSources: {} });
    expect(countEvents(dataDir)).toBe(EVENTS);
  });

  it('an interrupted export to a file leaves neither the file nor a temporary one', async () => {
    const outDir = makeTempDir();
    const target = join(outDir, 'out.ndjson');
    const proc = runCli(['events', 'export', '--data-dir', dataDir, '-o', target]);
    await until(() => readdirSync(outDir).length > 0, 20_000, 'the temporary file');
    interrupt(proc);
    const { code } = await proc.exited;
    expect(code).toBe(130);
    expect(proc.stderr()).toContain('was not written');
    expect(readdirSync(outDir)).toEqual([]);

    const complete = await hookrelay(['events', 'export', '--data-dir', dataDir, '-o', target]);
    expect(complete.code).toBe(0);
    expect(readdirSync(outDir)).toEqual(['out.ndjson']);
  });

  it('an interrupted bulk replay commits whole batches and says where to carry on', async () => {
    const rulesDir = makeTempDir();
    writeFileSync(join(rulesDir, 'bulk.yaml'), 'id: bulk\non: [order:bulk]\nto:\n  url: http://127.0.0.1:9/hook\n');
    const deliveries = () => query(dataDir, 'SELECT count(*) AS n, count(DISTINCT event_id) AS events, max(event_id) AS last FROM deliveries', { n: 0, events: 0, last: 0 });
    const proc = runCli(['events', 'replay', '--all', '--data-dir', dataDir, '--rules-dir', rulesDir]);
    await until(() => deliveries().n >= 200, 20_000, 'the first replayed batch');
    interrupt(proc);
    expect((await proc.exited).code).toBe(130);
    const resumeAt = /--after-id (\d+)/.exec(proc.stdout())?.[1];
    const done = deliveries();
    expect(Number(resumeAt)).toBe(done.last);
    expect(done.n % 200).toBe(0);
    expect(done.n).toBeLessThan(EVENTS);

    const rest = await hookrelay(['events', 'replay', '--all', '--after-id', resumeAt!, '--data-dir', dataDir, '--rules-dir', rulesDir, '--json']);
    expect(rest.json).toMatchObject({ state: 'done', processed: EVENTS - done.n, created: EVENTS - done.n });
    // Every event replayed exactly once over the two runs.
    expect(deliveries()).toMatchObject({ n: EVENTS, events: EVENTS });
  });

  it('shows a bar with rate and ETA when stderr is a terminal, and nothing when it is not', async () => {
    const target = join(makeTempDir(), 'tty.ndjson');
    // `script` runs the command on a pseudo-terminal and copies what it prints.
    const onTerminal = await new Promise<string>((resolve, reject) => {
      execFile('script', ['-qfec', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_PATH)} events export --data-dir ${JSON.stringify(dataDir)} -o ${JSON.stringify(target)}`, '/dev/null'],
        { env: { PATH: process.env.PATH ?? '' }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
    });
    expect(onTerminal).toMatch(/export \[.*\] 100% \| 30000\/30000 \| \d+\/s \| ETA \d+s/);
    expect(onTerminal).toContain('exported 30000 events');

    const piped = await hookrelay(['events', 'export', '--data-dir', dataDir, '-o', target]);
    // No server runs for this data dir: the first line says the store is read directly.
    expect(piped.stderr).toBe(`no running server found for this configuration (no live ${join(dataDir, 'hookrelay.runtime.json')}); reading the SQLite database ${join(dataDir, 'hookrelay.db')} directly\nexported 30000 events to ${target}\n`);
  });
});
