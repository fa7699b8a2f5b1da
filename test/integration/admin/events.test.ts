import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET } from '../../helpers/receiver.js';
import { eventually } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, fixtureOn, ruleYaml, startSink } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

const ids = (reply: { json: { items: { id: number }[] } }): number[] => reply.json.items.map((item) => item.id);

describeEachBackend('GET /admin/api/events', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('lists events newest first with every summary field', async () => {
    const { api, ingest, transfer } = await startAdminFixture();
    const checkoutId = randomUUID();
    const body = transfer({ email: 'ada@example.com', checkoutId, walletAddress: '0xabc' });
    const first = await ingest(body);
    const second = await ingest();
    const reply = await api('/events');
    expect(reply.status).toBe(200);
    expect(ids(reply)).toEqual([second, first]);
    expect(reply.json.nextCursor).toBeNull();
    const summary = reply.json.items[1];
    expect(summary).toEqual({
      id: first,
      source: 'checkout',
      event: 'transfer:succeeded',
      transferId: body.result.id,
      checkoutId,
      email: 'ada@example.com',
      walletAddress: '0xabc',
      totalPriceUsd: body.result.totalPriceUsd,
      validation: 'valid',
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      lastReceivedAt: summary.receivedAt,
      receivedCount: 1,
      bodyBytes: Buffer.byteLength(JSON.stringify(body)),
      edit: null,
      quarantine: null,
      issues: null,
      release: null,
      forwarding: { state: 'none', pending: 0, delivered: 0, dead: 0 },
    });
  });

  it('filters by event, source, checkoutId, email (any case), walletAddress, transferId, validation and time', async () => {
    const { api, ingest, transfer } = await startAdminFixture();
    const [coAda, coBob] = [randomUUID(), randomUUID()];
    const ada = transfer({ email: 'Ada@Example.com', checkoutId: coAda, walletAddress: '0xADA' });
    const adaId = await ingest(ada);
    const bobId = await ingest(transfer({ email: 'bob@example.com', checkoutId: coBob }));
    const other = await ingest({ event: 'checkout:created', result: { id: 'chk-1', checkoutId: coBob } });
    const cases: [string, number[]][] = [
      ['event=transfer:succeeded', [bobId, adaId]],
      ['event=checkout:created', [other]],
      ['source=checkout', [other, bobId, adaId]],
      ['source=elsewhere', []],
      [`checkoutId=${coBob}`, [other, bobId]],
      ['email=ada@example.COM', [adaId]],
      ['walletAddress=0xada', [adaId]],
      [`transferId=${ada.result.id}`, [adaId]],
      ['transferId=chk-1', [other]],
      ['validation=unrecognised', [other]],
      [`validation=valid&checkoutId=${coBob}`, [bobId]],
      ['email=bob@example.com&event=checkout:created', []],
    ];
    for (const [query, expected] of cases) {
      const reply = await api(`/events?${query}`);
      expect(reply.status, query).toBe(200);
      expect(ids(reply), query).toEqual(expected);
    }
    const all = (await api('/events')).json.items as { id: number; receivedAt: string }[];
    const bobAt = Date.parse(all.find((e) => e.id === bobId)!.receivedAt);
    expect(ids(await api(`/events?receivedFrom=${bobAt}`))).toEqual(all.filter((e) => Date.parse(e.receivedAt) >= bobAt).map((e) => e.id));
    expect(ids(await api(`/events?receivedTo=${bobAt}`))).toEqual(all.filter((e) => Date.parse(e.receivedAt) < bobAt).map((e) => e.id));
    expect(ids(await api(`/events?receivedFrom=${bobAt}&receivedTo=${bobAt + 1}&checkoutId=${coBob}`))).toContain(bobId);
  });

  it('filters by delivery state: events with at least one delivery pending, delivered or dead', async () => {
    const sink = await startSink();
    const { api, ingest, transfer, app } = await startAdminFixture({
      rules: {
        'all.yaml': ruleYaml('all', sink.url),
        // First attempt an hour away: stays pending.
        'later.yaml': ruleYaml('later', sink.url, 'where:\n  result.email: later@example.com\nretry:\n  schedule: [1h]\n'),
        // The transform fails: dead-lettered by the worker, before any request.
        'broken.yaml': ruleYaml('broken', sink.url, 'where:\n  result.email: broken@example.com\ntransform: $error("boom")\n'),
      },
    });
    const plain = await ingest(transfer({ email: 'plain@example.com' }));
    const later = await ingest(transfer({ email: 'later@example.com' }));
    const broken = await ingest(transfer({ email: 'broken@example.com' }));
    await eventually(async () => (await app.store.listEvents({ deliveryState: 'delivered' }, { limit: 10 })).items.length === 3, 10_000, 'three deliveries delivered');
    await eventually(async () => (await app.store.listEvents({ deliveryState: 'dead' }, { limit: 10 })).items.length === 1, 10_000, 'the broken delivery dead-lettered');
    expect(ids(await api('/events?deliveryState=delivered'))).toEqual([broken, later, plain]);
    expect(ids(await api('/events?deliveryState=pending'))).toEqual([later]);
    expect(ids(await api('/events?deliveryState=dead'))).toEqual([broken]);
    expect(ids(await api('/events?deliveryState=dead&email=broken@example.com'))).toEqual([broken]);
    expect(ids(await api('/events?deliveryState=dead&email=plain@example.com'))).toEqual([]);
    expect(ids(await api(`/events?deliveryState=pending&receivedFrom=0`))).toEqual([later]);
    // Each listed event says whether it was forwarded: its deliveries per state and the state that matters most.
    const forwarding = Object.fromEntries((await api('/events')).json.items.map((e: { id: number; forwarding: unknown }) => [e.id, e.forwarding]));
    expect(forwarding).toEqual({
      [plain]: { state: 'delivered', pending: 0, delivered: 1, dead: 0 },
      [later]: { state: 'pending', pending: 1, delivered: 1, dead: 0 },
      [broken]: { state: 'dead', pending: 0, delivered: 1, dead: 1 },
    });
  });

  it('refuses malformed queries with 400 bad_request and the issue paths', async () => {
    const { api } = await startAdminFixture();
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=ten', 'limit'],
      ['validation=maybe', 'validation'],
      ['deliveryState=lost', 'deliveryState'],
      ['receivedFrom=yesterday', 'receivedFrom'],
      ['stat=dead', '(root)'],
      ['cursor=not-a-cursor', 'cursor'],
    ];
    for (const [query, path] of cases) {
      const reply = await api(`/events?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.json.error.code, query).toBe('bad_request');
      expect(reply.json.error.details.issues.map((i: { path: string }) => i.path), query).toContain(path);
    }
  });
});

describeEachBackend('keyset pagination', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  async function collectPages(api: (path: string) => Promise<{ status: number; json: any }>, query: string, whileFetching: () => Promise<unknown>): Promise<number[][]> {
    const pages: number[][] = [];
    let cursor: string | null = null;
    do {
      // The first page shows what has committed when it is read, so only the pages after it race new events.
      const [reply]: [{ status: number; json: any }, unknown] = await Promise.all([api(`/events?limit=7${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), cursor ? whileFetching() : null]);
      expect(reply.status).toBe(200);
      pages.push(reply.json.items.map((item: { id: number }) => item.id));
      cursor = reply.json.nextCursor;
    } while (cursor !== null);
    return pages;
  }

  for (const [name, query] of [['by id', ''], ['by receipt time (time range given)', '&receivedFrom=0'], ['driven by delivery state', '&deliveryState=dead'], ['with an event filter', '&event=transfer:succeeded']] as const) {
    it(`pages are stable while new events arrive concurrently: ${name}`, async () => {
      const fixture = await startAdminFixture({ rules: { 'broken.yaml': ruleYaml('broken', 'http://127.0.0.1:9/never', 'transform: $error("boom")\n') } });
      const before: number[] = [];
      for (let i = 0; i < 30; i++) before.push(await fixture.ingest());
      // The worker dead-letters each (its transform fails): all of them before the pages are read.
      await eventually(async () => (await fixture.api('/events?limit=500&deliveryState=dead')).json.items.length === 30, 20_000, 'every delivery dead-lettered');
      // Every page fetch after the first races five new events being stored.
      const pages = await collectPages(fixture.api, query, () => Promise.all(Array.from({ length: 5 }, () => fixture.ingest())));
      const seen = pages.flat();
      expect(seen).toEqual([...before].reverse()); // each old event exactly once, newest first, no new ones
      expect(pages.slice(0, -1).every((page) => page.length === 7)).toBe(true);
      expect((await fixture.api('/events?limit=500')).json.items.length).toBeGreaterThan(30);
    });
  }

  it('a cursor of another list is refused', async () => {
    const { api, ingest } = await startAdminFixture();
    for (let i = 0; i < 3; i++) await ingest();
    const page = await api('/events?limit=1');
    const deliveriesCursor = Buffer.from('d1:5').toString('base64url');
    expect(page.json.nextCursor).toEqual(expect.any(String));
    expect((await api(`/events?cursor=${deliveriesCursor}`)).status).toBe(400);
    expect((await api(`/deliveries?cursor=${page.json.nextCursor}`)).status).toBe(400);
  });
});

describeEachBackend('GET /admin/api/events/:id', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('returns headers, the exact body (text and base64), the parsed JSON, and every delivery with its attempts', async () => {
    const sink = await startSink((index) => (index === 0 ? 503 : 200));
    const { api, app } = await startAdminFixture({ rules: { 'all.yaml': `id: all\non: ["*"]\nto:\n  url: ${sink.url}\nretry:\n  schedule: [0s, 0s]\n` } });
    // Odd spacing and non-ASCII characters: the stored bytes are the bytes received.
    const raw = Buffer.from(`{"event":"transfer:pending",  "result":{"id":"tr-ü-1","note":"zoë"}}`);
    const stored = await postSigned(app.webhookUrl(), raw, TEST_SECRET, { headers: { 'x-trace': 'abc' } });
    const id = stored.json.id as number;
    await sink.waitFor(2);
    const detail = await eventually(async () => {
      const reply = await api(`/events/${id}`);
      return reply.json.deliveries?.[0]?.state === 'delivered' ? reply : null;
    });
    expect(detail.status).toBe(200);
    const { event, deliveries } = detail.json;
    expect(event).toMatchObject({ id, transferId: 'tr-ü-1', validation: 'unrecognised', bodyBytes: raw.length, importedAt: null });
    expect(event.body).toBe(raw.toString('utf8'));
    expect(Buffer.from(event.bodyBase64, 'base64').equals(raw)).toBe(true);
    expect(event.parsed).toEqual(JSON.parse(raw.toString()));
    expect(event.headers).toMatchObject({ 'content-type': 'application/json', 'x-trace': 'abc', 'x-service-signature': expect.any(String) });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ eventId: id, ruleId: 'all', origin: 'ingest', state: 'delivered', attempts: 2, lastStatus: 200 });
    expect(deliveries[0].attemptLog.map((a: { attempt: number; status: number; outcome: string }) => [a.attempt, a.status, a.outcome])).toEqual([[1, 503, 'pending'], [2, 200, 'delivered']]);
  });

  it('answers 404 for an unknown event and 400 for an id that is not a number', async () => {
    const { api } = await startAdminFixture();
    const missing = await api('/events/999');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('not_found');
    const bad = await api('/events/abc');
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.issues[0].path).toBe('id');
    const wrongMethod = await api('/events/1', { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('GET');
  });
});
