import { describe, expect, it } from 'vitest';
import { copyKeyOf } from '../../src/store/copy-store.js';
import { COPY_TABLES, type CopyRows, type CopyTable } from '../../src/store/copyable-store.js';
import type { NewEvent } from '../../src/store/event-store.js';
import type { Store } from '../../src/store/store.js';
import { perTestClock, storeOpener, type StoreFactory, type TestClock } from './contract-helpers.js';

/**
 * What every Store promises to `hookrelay store copy`, through the interface alone: whole tables read in id
 * order with every column, written into another store with their ids, again without harm, and never over
 * different data. Both stores come from the same factory (copies between backends: test/e2e/store-copy.test.ts).
 */

const BODY = Buffer.concat([Buffer.from('{"event":"transfer:succeeded","result":{"id":"t"}}'), Buffer.from([0x00, 0xff, 0x0a])]);

function event(transferId: string, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: 'co-1', email: 'Buyer@Example.com', walletAddress: '0xAbC', validation: 'valid',
    receivedAt: 1_000, headers: { 'content-type': 'application/json', 'x-odd': 'ü "q"' }, body: BODY, ruleSetHash: 'h1', ...overrides,
  };
}

const forward = (ruleId: string) => ({ ruleId, ruleSetHash: 'h1', body: null, contentType: 'application/json' });

/** Every row of every table, as a copy reads them, in pages of `limit`. */
async function readAll(store: Store, limit = 2): Promise<{ [T in CopyTable]: CopyRows[T][] }> {
  const all = {} as { [T in CopyTable]: CopyRows[T][] };
  for (const table of COPY_TABLES) {
    const rows: CopyRows[CopyTable][] = [];
    for (;;) {
      const last = rows.at(-1);
      const page = await store.readCopyRows(table, last === undefined ? null : copyKeyOf(last), limit);
      if (page.length === 0) break;
      rows.push(...page);
    }
    (all as Record<CopyTable, unknown[]>)[table] = rows;
  }
  return all;
}

/** A store with every kind of row: rule sets, a repeated event, an edited copy, deliveries delivered, dead, pending and held, attempts, jobs. */
async function fill(store: Store, now: number, clock: TestClock): Promise<void> {
  await store.saveRuleSet({ hash: 'h1', kind: 'loaded', rules: [{ id: 'fwd', to: { url: 'http://127.0.0.1:9/a' } }], firstLoadedAt: 500 });
  await store.saveRuleSet({ hash: 'h2', kind: 'one-off', rules: [], firstLoadedAt: 600 });
  const first = await store.saveEvent(event('t-1', { totalPriceUsd: 104.37, deliveries: [forward('fwd'), forward('other')] }));
  await store.saveEvent(event('t-1', { receivedAt: 2_000 }));
  await store.saveEvent(event('t-2', { receivedAt: 3_000, validation: 'unrecognised', email: null, deliveries: [forward('fwd')] }));
  await store.saveEditedCopy({ ...event('t-1'), totalPriceUsd: 99.5, editedFrom: first.id, editedAt: 4_000, via: 'cli', validation: 'invalid', deliveries: [forward('fwd')] });
  const claimed = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
  expect(claimed).toHaveLength(4);
  const [a, b, c] = claimed;
  const record = (n: number, outcome: 'delivered' | 'pending' | 'dead', status: number) =>
    ({ attempt: n, startedAt: now, durationMs: 3, urlOrigin: 'http://127.0.0.1:9', status, errorCode: null, errorMessage: null, responseExcerpt: `answer ${status}`, outcome });
  await store.recordAttempt(a!.id, a!.leaseToken, record(1, 'delivered', 200), { state: 'delivered' });
  await store.recordAttempt(b!.id, b!.leaseToken, record(1, 'dead', 410), { state: 'dead', reason: 'gone' });
  await store.recordAttempt(c!.id, c!.leaseToken, record(1, 'pending', 503), { state: 'pending', nextAttemptAt: now + 30_000 });
  // The fourth stays held by its lease, as a worker's would when its server stopped.
  const job = await store.createJob({ kind: 'replay', filter: { event: 'transfer:succeeded' }, ruleId: null, nodeId: null, total: 3, startedAt: 7_000 });
  await store.updateJobProgress(job.id, { total: 3, processed: 3, created: 2, failed: 1, summary: { perRule: { fwd: 2 } } });
  clock.set(8_000);
  await store.finishJob(job.id, 'done', null);
  clock.set(now);
}

async function copyAll(source: Store, target: Store): Promise<number> {
  let added = 0;
  const rows = await readAll(source);
  for (const table of COPY_TABLES) added += await target.writeCopyRows(table, rows[table] as CopyRows[typeof table][]);
  return added;
}

export function storeCopyContract(factory: StoreFactory): void {
  const clock = perTestClock();
  const open = storeOpener(factory, clock);

  describe('copying a whole store', () => {
    it('reads every table in order with every column, and another store takes the rows with their ids and bytes', async () => {
      const now = Date.now();
      const source = await open();
      await fill(source, now, clock);
      const rows = await readAll(source);
      expect(rows.ruleSets.map((r) => r.hash)).toEqual(['h1', 'h2']);
      expect(rows.events).toHaveLength(3);
      expect(rows.events[0]).toMatchObject({ transferId: 't-1', receivedCount: 2, lastReceivedAt: 2_000, email: 'Buyer@Example.com', ruleSetHash: 'h1', edit: null, totalPriceUsd: 104.37 });
      expect(rows.events.map((e) => e.totalPriceUsd)).toEqual([104.37, null, 99.5]);
      expect(rows.events[2]).toMatchObject({ validation: 'invalid', edit: { editedFrom: rows.events[0]!.id, editedAt: 4_000, via: 'cli', number: 1 } });
      expect(rows.deliveries.map((d) => d.state)).toEqual(['delivered', 'dead', 'pending', 'pending']);
      expect(rows.deliveries[3]!.leaseToken).toEqual(expect.any(String));
      expect(rows.deliveries[2]).toMatchObject({ leaseToken: null, nextAttemptAt: now + 30_000, attempts: 1, lastStatus: 503 });
      expect(rows.attempts.map((a) => a.outcome)).toEqual(['delivered', 'dead', 'pending']);
      expect(rows.jobs).toEqual([expect.objectContaining({ state: 'done', processed: 3, summary: { perRule: { fwd: 2 } }, finishedAt: 8_000 })]);

      const target = await open();
      // Only the target's ids from here on: the source's rows land under ids the target never handed out itself.
      expect(await copyAll(source, target)).toBe(2 + 3 + 4 + 3 + 1);
      expect(await readAll(target, 100)).toEqual(rows);
      const copied = (await target.getEvent(rows.events[0]!.id))!;
      expect(Buffer.compare(copied.body, BODY)).toBe(0);
      expect(await target.copyExtent()).toEqual(await source.copyExtent());
      // New rows take ids above the copied ones.
      const fresh = await target.saveEvent(event('t-new', { deliveries: [forward('fwd')] }));
      expect(fresh.id).toBeGreaterThan(rows.events.at(-1)!.id);
      const [freshDelivery] = (await target.listDeliveries({ eventId: fresh.id }, { limit: 1 })).items;
      expect(freshDelivery!.id).toBeGreaterThan(rows.deliveries.at(-1)!.id);
      const job = await target.createJob({ kind: 'retry', filter: {}, ruleId: null, nodeId: null, total: 0, startedAt: 9_000 });
      expect(job.id).toBeGreaterThan(rows.jobs.at(-1)!.id);
    });

    it('writes the same rows again without adding any, bringing changed states up to date', async () => {
      const now = Date.now();
      const source = await open();
      await fill(source, now, clock);
      const target = await open();
      await copyAll(source, target);
      await source.saveEvent(event('t-1', { receivedAt: 9_000 }));
      const [dead] = (await source.listDeliveries({ state: 'dead' }, { limit: 1 })).items;
      clock.set(now);
      expect(await source.retryDelivery(dead!.id)).toBe(true);
      expect(await copyAll(source, target)).toBe(0);
      const after = await readAll(target, 100);
      expect(after.events[0]).toMatchObject({ receivedCount: 3, lastReceivedAt: 9_000 });
      expect(after.deliveries.find((d) => d.id === dead!.id)).toMatchObject({ state: 'pending', deadReason: null });
      expect(after).toEqual(await readAll(source, 100));
    });

    it('carries the generated settings, the ordering and redrive columns of deliveries, outages and redrives, and orders new rows after them', async () => {
      const now = Date.now();
      const source = await open();
      clock.set(100);
      await source.claimSetting('ingest-secret:checkout', 'whsec-source');
      clock.set(200);
      await source.claimSetting('admin-token', 'token-source');
      clock.set(now);
      const ordered = { ...forward('ord'), orderKey: 'k1' };
      await source.saveEvent(event('t-1', { deliveries: [ordered, forward('fwd'), forward('keep')] }));
      await source.saveEvent(event('t-2', { deliveries: [ordered] }));
      const claimed = await source.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(claimed.map((d) => d.ruleId)).toEqual(['ord', 'fwd', 'keep']); // the second of key k1 waits behind the first
      const failed = (n: number, outcome: 'pending' | 'dead') =>
        ({ attempt: n, startedAt: now, durationMs: 3, urlOrigin: 'http://127.0.0.1:9', status: 503, errorCode: null, errorMessage: null, responseExcerpt: null, outcome });
      await source.recordAttempt(claimed[0]!.id, claimed[0]!.leaseToken, failed(1, 'pending'), { state: 'pending', nextAttemptAt: now + 30_000 });
      await source.recordAttempt(claimed[1]!.id, claimed[1]!.leaseToken, failed(1, 'dead'), { state: 'dead', reason: 'retries ran out', retryable: true });
      await source.recordAttempt(claimed[2]!.id, claimed[2]!.leaseToken, failed(1, 'dead'), { state: 'dead', reason: 'retries ran out', retryable: true });
      await source.openOutage('http://127.0.0.1:9', now - 60_000);
      // Only rule fwd opted in to redrive: its dead letter starts a new pass, keep's stays dead and redrivable.
      clock.set(Date.now() + 60_000);
      expect((await source.closeOutage('http://127.0.0.1:9', new Map([['fwd', 0]])))!.redriven).toEqual([claimed[1]!.id]);

      const rows = await readAll(source, 100);
      expect(rows.settings).toEqual([
        { name: 'admin-token', value: 'token-source', createdAt: 200 },
        { name: 'ingest-secret:checkout', value: 'whsec-source', createdAt: 100 },
      ]);
      const [head, redriven, dead, behind] = rows.deliveries; // in id order: event t-1's three, then t-2's
      expect(head).toMatchObject({ ruleId: 'ord', orderKey: 'k1', orderSeq: expect.any(Number), blockedSince: expect.any(Number), passOffset: 0 });
      expect(behind).toMatchObject({ ruleId: 'ord', orderKey: 'k1', blockedSince: null });
      expect(behind!.orderSeq).toBeGreaterThan(head!.orderSeq!);
      expect(redriven).toMatchObject({ ruleId: 'fwd', state: 'pending', passOffset: 1, orderKey: null, orderSeq: null, retryableDeadDestination: null });
      expect(dead).toMatchObject({ ruleId: 'keep', state: 'dead', passOffset: 0, retryableDeadDestination: 'http://127.0.0.1:9' });

      expect(rows.outages).toEqual([expect.objectContaining({ destination: 'http://127.0.0.1:9', openedAt: now - 60_000, closedAt: expect.any(Number), redriven: 1 })]);
      expect(rows.redrives).toEqual([expect.objectContaining({ deliveryId: redriven!.id, outageId: rows.outages[0]!.id, kind: 'redrive' })]);

      const target = await open();
      expect(await copyAll(source, target)).toBe(2 + 2 + 4 + 1 + 1 + 3); // settings, events, deliveries, outages, redrives, attempts
      expect(await readAll(target, 100)).toEqual(rows);
      expect(await copyAll(source, target)).toBe(0);
      expect((await target.getDelivery(redriven!.id))!.redrives).toEqual((await source.getDelivery(redriven!.id))!.redrives);
      // A new outage takes an id above the copied one.
      const { outage } = await target.openOutage('http://127.0.0.1:10', now);
      expect(outage.id).toBeGreaterThan(rows.outages[0]!.id);
      // The target's first writer is the source: a node started on it uses the senders' secret and the admin token.
      expect(await target.claimSetting('ingest-secret:checkout', 'whsec-new')).toBe('whsec-source');
      expect(await target.getSetting('admin-token')).toBe('token-source');
      // A new row of key k1 queues behind the copied ones.
      await target.saveEvent(event('t-3', { deliveries: [ordered] }));
      const fresh = (await target.readCopyRows('deliveries', behind!.id, 10)).filter((d) => d.ruleId === 'ord');
      expect(fresh).toHaveLength(1);
      expect(fresh[0]!.orderSeq).toBeGreaterThan(behind!.orderSeq!);
      // The head still holds its key: the copied rows' places were kept.
      clock.set(now + 180_000);
      const due = await target.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(due.map((d) => d.id)).toEqual([head!.id, redriven!.id]);
    });

    it('refuses another value under a copied setting name, writing nothing of the batch', async () => {
      const source = await open();
      await source.claimSetting('admin-token', 'token-source');
      await source.claimSetting('ingest-secret:checkout', 'whsec-source');
      const rows = await readAll(source, 100);
      const target = await open();
      await target.claimSetting('ingest-secret:checkout', 'whsec-target');
      await expect(target.writeCopyRows('settings', rows.settings)).rejects.toMatchObject({
        code: 'store_copy_conflict', status: 409, details: { table: 'settings', id: 'ingest-secret:checkout' },
      });
      expect(await target.getSetting('admin-token')).toBeNull();
      expect(await target.getSetting('ingest-secret:checkout')).toBe('whsec-target');
      // The same value is no conflict.
      const same = await open();
      await same.claimSetting('ingest-secret:checkout', 'whsec-source');
      expect(await same.writeCopyRows('settings', rows.settings)).toBe(1);
      expect(await same.getSetting('admin-token')).toBe('token-source');
    });

    it('refuses different data under a copied id, or a copied transfer under another id, writing nothing of the batch', async () => {
      const source = await open();
      await fill(source, Date.now(), clock);
      const rows = await readAll(source, 100);
      const target = await open();
      await target.writeCopyRows('events', rows.events.slice(0, 1));
      const changed = { ...rows.events[1]!, id: rows.events[0]!.id };
      await expect(target.writeCopyRows('events', [rows.events[1]!, changed])).rejects.toMatchObject({ code: 'store_copy_conflict', status: 409, details: { table: 'events', id: rows.events[0]!.id } });
      expect((await target.copyExtent()).events.rows).toBe(1); // rows.events[1] was in the failed batch too
      const sameTransfer = { ...rows.events[0]!, id: rows.events[2]!.id + 10 };
      await expect(target.writeCopyRows('events', [sameTransfer])).rejects.toMatchObject({ code: 'store_copy_conflict' });
      await target.writeCopyRows('events', rows.events);
      const otherDelivery = { ...rows.deliveries[0]!, ruleId: 'someone-else' };
      await target.writeCopyRows('deliveries', [otherDelivery]);
      await expect(target.writeCopyRows('deliveries', rows.deliveries)).rejects.toMatchObject({ code: 'store_copy_conflict', details: { table: 'deliveries', id: rows.deliveries[0]!.id } });
      expect((await target.copyExtent()).deliveries.rows).toBe(1);
    });
  });
}
