import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { WalFsync, type FsyncFn } from '../../../src/store/sqlite/wal-fsync.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

/** An fsync that completes only when the test says so, recording each call. */
function controlledFsync() {
  const calls: ((err: NodeJS.ErrnoException | null) => void)[] = [];
  const fn: FsyncFn = (_fd, callback) => void calls.push(callback);
  return { fn, calls, complete: (i: number, err: NodeJS.ErrnoException | null = null) => calls[i]!(err) };
}

describe('WalFsync', () => {
  it('lets one fsync cover every request made before it started, and runs one more for later ones', async () => {
    const file = join(makeTempDir(), 'wal');
    writeFileSync(file, '');
    const fsync = controlledFsync();
    const wal = new WalFsync(file, fsync.fn);
    const done: string[] = [];
    const a = wal.sync().then(() => done.push('a'));
    const b = wal.sync().then(() => done.push('b')); // arrives while the first fsync runs
    const c = wal.sync().then(() => done.push('c'));
    expect(fsync.calls).toHaveLength(1);
    fsync.complete(0);
    await a;
    await new Promise((r) => setImmediate(r));
    expect(done).toEqual(['a']);
    expect(fsync.calls).toHaveLength(2); // b and c share the second fsync
    fsync.complete(1);
    await Promise.all([b, c]);
    expect(done).toEqual(['a', 'b', 'c']);
    wal.close();
  });
});

describe('SqliteStore durability', () => {
  const event = () => {
    const body = sampleTransferSucceeded();
    return { source: 'checkout', event: body.event, transferId: body.result.id, checkoutId: null, email: null, walletAddress: null, validation: 'valid' as const, receivedAt: Date.now(), headers: {}, body: Buffer.from(JSON.stringify(body)) };
  };

  it('with durability full, acknowledges a save only after the WAL fsync completes', async () => {
    const fsync = controlledFsync();
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'full', fsync: fsync.fn });
    let acknowledged = false;
    const saving = store.saveEvent(event()).then(() => (acknowledged = true));
    for (let i = 0; i < 5 && fsync.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(fsync.calls).toHaveLength(1);
    expect(acknowledged).toBe(false);
    fsync.complete(0);
    await saving;
    expect(acknowledged).toBe(true);
    const closing = store.close();
    await new Promise((r) => setTimeout(r, 10));
    fsync.complete(1);
    await closing;
  });

  it('turns a failed fsync into store_unavailable', async () => {
    const fsync = controlledFsync();
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'full', fsync: fsync.fn });
    const saving = store.saveEvent(event());
    for (let i = 0; i < 5 && fsync.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    fsync.complete(0, Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
    await expect(saving).rejects.toMatchObject({ code: 'store_unavailable' });
    const closing = store.close();
    await new Promise((r) => setTimeout(r, 10));
    fsync.complete(1);
    await closing;
  });

  it('with durability normal, never calls fsync on the ingest path', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal', fsync: () => { throw new Error('must not fsync'); } });
    await expect(store.saveEvent(event())).resolves.toMatchObject({ duplicate: false });
    await store.close();
  });
});
