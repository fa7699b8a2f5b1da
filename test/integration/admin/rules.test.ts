import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, ruleYaml, startAdminFixture, startSink } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

const BIG = 'where:\n  result.totalPriceUsd: { $gte: 100 }\n';

describe('GET /admin/api/rules', () => {
  it('lists the rules as written (secrets redacted) with pending/delivered/dead counts per rule', async () => {
    const sink = await startSink((index) => (index === 0 ? 200 : 400));
    const { api, ingest, app } = await startAdminFixture({
      rules: {
        'a.yaml': ruleYaml('a', sink.url, 'sign: { scheme: hmac-sha256-hex, secret: literal-secret }\nretry:\n  schedule: [0s]\n'),
        'later.yaml': ruleYaml('later', sink.url, 'retry:\n  schedule: [1h]\n'),
        'off.yaml': ruleYaml('off', '${UNSET_URL}', 'enabled: false\n'),
      },
    });
    await ingest();
    await ingest();
    await eventually(async () => (await app.store.deliveryCountsByRule(['a'])).get('a')!.pending === 0, 10_000, 'rule a settled');

    const reply = await api('/rules');
    expect(reply.status).toBe(200);
    const status = app.rules.status();
    expect(reply.json).toMatchObject({ hash: status.hash, loadedAt: status.loadedAt.toISOString(), lastError: null });
    expect(reply.json.warnings).toEqual([expect.stringContaining('UNSET_URL')]);
    const byId = Object.fromEntries(reply.json.rules.map((r: { id: string }) => [r.id, r]));
    expect(Object.keys(byId).sort()).toEqual(['a', 'later', 'off']);
    // Named as in the rules directory, not by the server's absolute path.
    expect(byId.a).toMatchObject({ file: 'a.yaml', line: 1, enabled: true, on: ['transfer:succeeded'], to: { url: sink.url, method: 'POST' }, sign: { scheme: 'hmac-sha256-hex', secret: '[redacted]' } });
    expect(byId.a.counts).toEqual({ pending: 0, delivered: 1, dead: 1 });
    expect(byId.later.counts).toEqual({ pending: 2, delivered: 0, dead: 0 });
    expect(byId.off).toMatchObject({ enabled: false, counts: { pending: 0, delivered: 0, dead: 0 }, to: { url: '${UNSET_URL}' } });
    expect(JSON.stringify(reply.json)).not.toContain('literal-secret');
  });

  it('reports a bad edit as lastError with file:line locations while the last good rules stay in use', async () => {
    const { api, app, rulesDir } = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', 'http://127.0.0.1:9/a') } });
    const before = (await api('/rules')).json;
    writeFileSync(join(rulesDir, 'a.yaml'), 'id: a\non: [transfer:succeeded]\nto:\n  url: not a url\n');
    await app.rules.check();
    const after = (await api('/rules')).json;
    expect(after.hash).toBe(before.hash);
    expect(after.rules.map((r: { id: string }) => r.id)).toEqual(['a']);
    expect(after.lastError).toEqual({ at: expect.any(String), errors: [expect.stringMatching(/^a\.yaml:4 to\.url: /)] });
  });
});

describe('POST /admin/api/rules/:id/dry-run', () => {
  it('tries one rule against a stored event: matched with the body it would send, or the reason it does not match', async () => {
    const { api, ingest, transfer } = await startAdminFixture({
      rules: {
        'big.yaml': ruleYaml('big', 'http://127.0.0.1:9/big', BIG),
        'card.yaml': ruleYaml('card', 'http://127.0.0.1:9/card', 'transform: \'{ "email": result.email }\'\n'),
      },
      delivery: { enabled: false },
    });
    const small = await ingest(transfer({ unitPriceUsd: 10, quantity: 1, email: 'small@example.com' }));
    const bigBody = transfer({ unitPriceUsd: 500, email: 'big@example.com' });
    const big = await ingest(bigBody);

    const matched = await api('/rules/big/dry-run', { method: 'POST', body: { eventId: big } });
    expect(matched.status).toBe(200);
    expect(matched.json.results).toEqual([{ eventId: big, event: 'transfer:succeeded', matched: true, reason: null, body: JSON.stringify(bigBody), contentType: 'application/json' }]);
    const mismatch = await api('/rules/big/dry-run', { method: 'POST', body: { eventId: small } });
    expect(mismatch.json.results).toEqual([{ eventId: small, event: 'transfer:succeeded', matched: false, reason: expect.stringContaining('totalPriceUsd') }]);

    const last = await api('/rules/card/dry-run', { method: 'POST', body: { last: 5 } });
    expect(last.json.results.map((r: { eventId: number; body: string }) => [r.eventId, JSON.parse(r.body)])).toEqual([
      [big, { email: 'big@example.com' }],
      [small, { email: 'small@example.com' }],
    ]);
    // Nothing was stored or sent.
    expect((await api('/deliveries')).json.items.filter((d: { ruleId: string }) => d.ruleId === 'big')).toHaveLength(1);
  });

  it('a transform that fails: deadReason, the reason the delivery would be dead-lettered (renderError: deprecated alias)', async () => {
    const { api, ingest } = await startAdminFixture({
      rules: { 'broken.yaml': ruleYaml('broken', 'http://127.0.0.1:9/broken', 'transform: result.nothingHere\n') },
    });
    const id = await ingest();
    const reason = 'transform produced no value (a path in it matched nothing)';
    const reply = await api('/rules/broken/dry-run', { method: 'POST', body: { eventId: id } });
    expect(reply.json.results).toEqual([expect.objectContaining({ eventId: id, matched: true, deadReason: reason, renderError: reason })]);
    // The worker renders the same way: the delivery is dead-lettered with the reason the dry run gave.
    const delivery = await eventually(async () => (await api('/deliveries?state=dead')).json.items[0], 10_000, 'the delivery dead-lettered');
    expect(delivery).toMatchObject({ ruleId: 'broken', state: 'dead', deadReason: reason });
  });

  it('404 for an unknown rule or event; 422 unless exactly one of eventId or last (1..1000)', async () => {
    const { api, ingest } = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', 'http://127.0.0.1:9/a') }, delivery: { enabled: false } });
    const id = await ingest();
    expect((await api('/rules/nope/dry-run', { method: 'POST', body: { eventId: id } })).status).toBe(404);
    expect((await api('/rules/a/dry-run', { method: 'POST', body: { eventId: 999 } })).status).toBe(404);
    for (const body of [{}, { eventId: id, last: 2 }, { last: 0 }, { last: 1001 }, { eventId: 'one' }]) {
      const reply = await api('/rules/a/dry-run', { method: 'POST', body });
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.json.error.code).toBe('validation_failed');
    }
  });
});
