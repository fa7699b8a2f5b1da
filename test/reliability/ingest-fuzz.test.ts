import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { signHmacSha256Hex } from '../../src/signing/hmac-sha256-hex.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';
import { rulesDirWith } from '../helpers/rules.js';
import { removeTempDirs } from '../helpers/temp-dir.js';
import { installLoopbackTripwire } from './support/loopback-tripwire.js';
import { chunked, rawRequest, requestHead, type RawResponse } from './support/raw-http.js';
import { report, runSeed, scale, timeLimit } from './support/soak.js';

// Every request goes over a raw loopback socket, so header names, case, duplicates and framing are exactly
// what the generator made. The delivery loop is off: rules are matched (and transforms run) at ingest,
// nothing is sent.
const tripwire = installLoopbackTripwire();
let receiver: TestReceiver | null = null;
afterEach(async () => {
  await receiver?.close();
  receiver = null;
});
afterAll(() => {
  report('ingest-fuzz', { seed: SEED, properties: totals.properties, cases: totals.cases, passed: totals.cases, accepted: totals.accepted, rejected: totals.rejected, bareParserAnswers: totals.bareParserAnswers, fiveHundreds: 0, lost: 0 });
  expect(tripwire.violations).toEqual([]);
  tripwire.uninstall();
  removeTempDirs();
});

const SEED = runSeed();
const MAX_BODY = 16 * 1024;
const runs = (n: number): number => scale(n, n * 10);
const totals = { cases: 0, accepted: 0, rejected: 0, properties: 0, bareParserAnswers: 0 };
let propertyIndex = 0;

/** fc.assert with the printed seed (plus the property's index, so each property has its own stream). */
async function check<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, numRuns: number): Promise<void> {
  const seed = SEED + propertyIndex++;
  totals.properties += 1;
  await fc.assert(
    fc.asyncProperty(arbitrary, async (value) => {
      totals.cases += 1;
      await predicate(value);
    }),
    { seed, numRuns, endOnFailure: false },
  );
}

async function startFuzzReceiver(maxBody = MAX_BODY): Promise<TestReceiver> {
  receiver = await startTestReceiver({
    maxBody,
    durability: 'normal',
    delivery: { enabled: false },
    retention: { enabled: false },
    // Rules that walk the body: a filter on nested paths and a transform, run for every stored event.
    rulesDir: rulesDirWith({
      'fuzz.yaml': [
        'id: fuzz-all',
        'on: ["*"]',
        'where:',
        '  $or:',
        '    - result.id: { $exists: true }',
        '    - result.nested.deep: { $ne: 1 }',
        'transform: |',
        '  { "id": result.id, "event": $event, "email": result.email }',
        'to:',
        '  url: http://127.0.0.1:9/never-sent',
        '',
      ].join('\n'),
    }),
  });
  return receiver;
}

interface Counts {
  rows: number;
  received: number;
}

/** Routable events; bodies held in quarantine (an authentic body that failed the schema) are counted apart. */
function counts(app: TestReceiver): Counts {
  return (app.store as SqliteStore).db.prepare('SELECT count(*) AS rows, coalesce(sum(received_count), 0) AS received FROM events WHERE quarantine IS NULL').get() as Counts;
}

function heldCounts(app: TestReceiver): Counts {
  return (app.store as SqliteStore).db.prepare("SELECT count(*) AS rows, coalesce(sum(received_count), 0) AS received FROM events WHERE quarantine = 'held'").get() as Counts;
}

interface WireRequest {
  method?: string;
  path?: string;
  /** Headers exactly as sent: order, name case and duplicates kept. */
  headers: [string, string][];
  body: Buffer;
  /** Send chunked with these chunk sizes instead of Content-Length. */
  chunks?: number[];
  /** Leave out Content-Length (and Transfer-Encoding). */
  noLength?: boolean;
}

function toWire(app: TestReceiver, request: WireRequest): Buffer {
  const headers: [string, string | number][] = [['Host', `127.0.0.1:${app.port}`], ...request.headers];
  if (request.chunks) headers.push(['Transfer-Encoding', 'chunked']);
  else if (!request.noLength) headers.push(['Content-Length', request.body.length]);
  headers.push(['Connection', 'close']);
  const head = Buffer.from(requestHead(request.method ?? 'POST', request.path ?? '/webhooks/checkout', headers), 'latin1');
  return Buffer.concat([head, request.chunks ? chunked(request.body, request.chunks) : request.body]);
}

const sign = (body: Buffer): string => signHmacSha256Hex(TEST_SECRET, body);

/** A signed JSON POST of `body`, with `extra` headers after the standard ones. */
function signedPost(body: Buffer, extra: [string, string][] = []): WireRequest {
  return { headers: [['Content-Type', 'application/json'], ['X-Service-Signature', sign(body)], ...extra], body };
}

/**
 * The property every request must satisfy: an answer (never a dropped connection or a 5xx); a 4xx has
 * the error body and stored nothing routable (no row, no counter bump; a signed body that fails the event
 * schema is kept held in quarantine, once); a 200 stored the exact bytes. Returns the response for the
 * generator's stronger expectations.
 */
async function sendAndCheck(app: TestReceiver, request: WireRequest): Promise<RawResponse & { json: any }> {
  const before = counts(app);
  const heldBefore = heldCounts(app);
  const response = await rawRequest(app.port, toWire(app, request), { timeoutMs: 10_000 });
  const after = counts(app);
  const heldAfter = heldCounts(app);
  const context = `HTTP ${response.status} ${response.error ?? ''} ${response.body.toString('utf8').slice(0, 300)}`;
  expect(response.status, context).toBeGreaterThanOrEqual(200);
  expect(response.status, context).toBeLessThan(500);
  let json: any;
  try {
    json = JSON.parse(response.body.toString('utf8'));
  } catch {
    throw new Error(`the answer is not JSON: ${context}`);
  }
  expect(response.headers['content-type'], context).toMatch(/^application\/json/);
  if (response.status === 200) {
    totals.accepted += 1;
    expect(json, context).toEqual({ id: expect.any(Number), duplicate: expect.any(Boolean), receivedCount: expect.any(Number) });
    const row = (app.store as SqliteStore).db.prepare('SELECT body FROM events WHERE id = ?').get(json.id) as { body: Buffer } | undefined;
    expect(row, context).toBeDefined();
    if (!json.duplicate) {
      expect(after.rows).toBe(before.rows + 1);
      expect(Buffer.compare(row!.body, request.body), 'stored byte-exact').toBe(0);
    } else {
      expect(after.rows).toBe(before.rows);
      expect(after.received).toBe(before.received + 1);
    }
  } else {
    totals.rejected += 1;
    expect(response.status, context).toBeGreaterThanOrEqual(400);
    // {"error":{"code","message","details"}}: details may be null, but the key is always there.
    expect(Object.keys(json), context).toEqual(['error']);
    expect(Object.keys(json.error).sort(), context).toEqual(['code', 'details', 'message']);
    expect(json.error, context).toMatchObject({ code: expect.stringMatching(/^[a-z_]+$/), message: expect.any(String) });
    expect(after, `a refused request changed the store: ${context}`).toEqual(before);
    if (response.status === 422 && json.error.code === 'invalid_payload') {
      // Kept in quarantine: a new held row, or a repeat of one counted.
      expect(heldAfter.received, `kept in quarantine: ${context}`).toBe(heldBefore.received + 1);
      expect(heldAfter.rows - heldBefore.rows, context).toBeLessThanOrEqual(1);
    } else expect(heldAfter, `a refused request changed the store: ${context}`).toEqual(heldBefore);
  }
  return { ...response, json };
}

/** The receiver still answers after the run. */
async function stillHealthy(app: TestReceiver): Promise<void> {
  const health = await rawRequest(app.port, requestHead('GET', '/healthz', [['Host', 'x'], ['Connection', 'close']]));
  expect(health.status).toBe(200);
}

// ---- generators -------------------------------------------------------------------------------------

/** A valid transfer:succeeded in the spec's shape with a generated transfer id. */
const validTransfer = fc.uuid({ version: 4 }).map((id) => {
  const body = sampleTransferSucceeded();
  return { ...body, result: { ...body.result, id } };
});

const jsonLeaf = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));

/** A value of any JSON type but `not`. */
function wrongType(not: 'string' | 'number' | 'object'): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [fc.boolean(), fc.constant(null), fc.array(jsonLeaf, { maxLength: 3 })];
  if (not !== 'string') options.push(fc.string({ maxLength: 20 }));
  if (not !== 'number') options.push(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
  if (not !== 'object') options.push(fc.dictionary(fc.string({ maxLength: 5 }), jsonLeaf, { maxKeys: 3 }));
  return fc.oneof(...options);
}

const RESULT_FIELDS: [string, 'string' | 'number' | 'object'][] = [
  ['id', 'string'], ['checkoutId', 'string'], ['walletAddress', 'string'], ['walletType', 'string'], ['email', 'string'],
  ['quantity', 'number'], ['paymentMethod', 'string'], ['networkFeeUsd', 'number'], ['totalPriceUsd', 'number'],
  ['createdAt', 'string'], ['paymentCompletedAt', 'string'], ['transferCompletedAt', 'string'], ['claimedTokens', 'object'],
];

const HUGE_NUMBERS = ['1e400', '-1e400', '1e-400', '123456789012345678901234567890123456789', '0.1e99999', '-0', '9007199254740993', '1' + '0'.repeat(400), '1.0000000000000000000000000001'];

/** Byte sequences that are not UTF-8: a surrogate, overlong forms, 5-byte forms, stray bytes, beyond U+10FFFF. */
const INVALID_UTF8 = [
  [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xc0, 0xaf], [0xc1, 0xbf], [0xe0, 0x80, 0xaf], [0xf0, 0x80, 0x80, 0xaf],
  [0xf8, 0x88, 0x80, 0x80, 0x80], [0xff], [0xfe], [0xc3], [0x80], [0xf4, 0x90, 0x80, 0x80],
].map((bytes) => Buffer.from(bytes));

function insertAt(body: Buffer, position: number, bytes: Buffer): Buffer {
  return Buffer.concat([body.subarray(0, position), bytes, body.subarray(position)]);
}

describe(`ingest fuzz (seed ${SEED}; repeat a run with RELIABILITY_SEED=${SEED})`, () => {
  it('random bytes, signed, as JSON: refused with a 4xx error body, nothing routable stored', async () => {
    const app = await startFuzzReceiver();
    await check(fc.uint8Array({ maxLength: 2048 }), async (bytes) => {
      const response = await sendAndCheck(app, signedPost(Buffer.from(bytes)));
      expect([200, 400, 422]).toContain(response.status);
    }, runs(400));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('truncated JSON: 400 invalid_json, nothing stored', async () => {
    const app = await startFuzzReceiver();
    await check(fc.tuple(validTransfer, fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true })), async ([body, cut]) => {
      const full = Buffer.from(JSON.stringify(body));
      const truncated = full.subarray(0, Math.floor(cut * full.length));
      const response = await sendAndCheck(app, signedPost(truncated));
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('invalid_json');
    }, runs(300));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('deeply nested JSON (up to 200,000 levels, within and beyond the size and nesting limits): a 4xx or stored byte-exact, never a 5xx', async () => {
    const limit = 1024 * 1024;
    const app = await startFuzzReceiver(limit);
    const nested = fc.record({
      depth: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1000, max: 8000 }), fc.integer({ min: 8001, max: 200_000 })),
      open: fc.constantFrom('[', '{"a":'),
      where: fc.constantFrom('unknown-field', 'as-result', 'as-body'),
    });
    await check(nested, async ({ depth, open, where }) => {
      const close = open === '[' ? ']' : '}';
      const deep = `${open.repeat(depth)}1${close.repeat(depth)}`;
      const text =
        where === 'as-body' ? deep
          : where === 'as-result' ? `{"event":"fuzz:nested","result":${deep}}`
            : `{"event":"fuzz:nested","result":{"id":"n-${depth}-${open.length}-${Math.random()}","nested":{"deep":${deep}}}}`;
      const response = await sendAndCheck(app, signedPost(Buffer.from(text)));
      if (text.length > limit) expect(response.status).toBe(413);
      // The body, result and nested objects are three levels: within the default 64 it is stored, beyond it refused.
      else if (where === 'unknown-field' && depth + 3 <= 64) expect(response.status).toBe(200);
      else if (where === 'unknown-field') expect([response.status, response.json.error.code]).toEqual([422, 'too_deeply_nested']);
      else expect(response.status).toBeGreaterThanOrEqual(400);
    }, runs(120));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('huge and edge numbers: a 422 naming the field where the schema wants a sane number, stored byte-exact where it does not care', async () => {
    const app = await startFuzzReceiver();
    const arbitrary = fc.record({
      body: validTransfer,
      number: fc.constantFrom(...HUGE_NUMBERS),
      field: fc.constantFrom('quantity', 'networkFeeUsd', 'totalPriceUsd', 'extraNumber'),
    });
    await check(arbitrary, async ({ body, number, field }) => {
      const marker = '"__NUMBER__"';
      const text = JSON.stringify({ ...body, result: { ...body.result, [field]: '__NUMBER__' } }).replace(marker, number);
      const response = await sendAndCheck(app, signedPost(Buffer.from(text)));
      const value = Number(number);
      // What the schema promises: a positive integer quantity, finite non-negative prices; extra fields are kept as sent.
      const verdict =
        field === 'extraNumber' ? 'accept'
          : !Number.isFinite(value) ? 'refuse'
            : field !== 'quantity' ? (value >= 0 ? 'accept' : 'refuse')
              : !Number.isInteger(value) || value <= 0 ? 'refuse'
                : Number.isSafeInteger(value) ? 'accept' : 'either';
      if (verdict === 'accept') expect(response.status, text).toBe(200);
      if (verdict === 'refuse') expect(response.status, text).toBe(422);
      if (response.status === 422) expect(response.json.error.details.issues.map((i: { path: string }) => i.path)).toContain(`result.${field}`);
    }, runs(200));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('a wrong type (or a missing value) in any field: 422 naming that field, kept only in quarantine', async () => {
    const app = await startFuzzReceiver();
    const arbitrary = fc.constantFrom(...RESULT_FIELDS).chain(([field, type]) =>
      fc.record({ body: validTransfer, field: fc.constant(field), value: fc.oneof({ weight: 5, arbitrary: wrongType(type) }, { weight: 1, arbitrary: fc.constant(undefined) }) }),
    );
    await check(arbitrary, async ({ body, field, value }) => {
      const text = JSON.stringify({ ...body, result: { ...body.result, [field]: value } });
      const response = await sendAndCheck(app, signedPost(Buffer.from(text)));
      expect(response.status, text).toBe(422);
      expect(response.json.error.code).toBe('invalid_payload');
      expect(response.json.error.details.issues.map((i: { path: string }) => i.path), text).toContain(`result.${field}`);
    }, runs(400));
    // The envelope itself: `event` and `result` of the wrong type.
    await check(fc.record({ key: fc.constantFrom('event', 'result'), value: wrongType('string').filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)) }), async ({ key, value }) => {
      const body = { event: 'transfer:succeeded', result: sampleTransferSucceeded().result, [key]: value };
      const response = await sendAndCheck(app, signedPost(Buffer.from(JSON.stringify(body))));
      expect(response.status).toBe(422);
      expect(response.json.error.details.issues.map((i: { path: string }) => i.path)).toContain(key);
    }, runs(100));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('unicode tricks: bytes that are not UTF-8 are 400; escaped lone surrogates, a BOM, confusable event names are stored byte-exact or refused, never a 5xx', async () => {
    const app = await startFuzzReceiver();
    await check(fc.record({ body: validTransfer, bad: fc.constantFrom(...INVALID_UTF8), where: fc.double({ min: 0, max: 1, noNaN: true }) }), async ({ body, bad, where }) => {
      // Inside the e-mail string, or anywhere at all.
      const text = Buffer.from(JSON.stringify(body));
      const at = where < 0.5 ? text.indexOf('@') : Math.floor(where * text.length);
      const response = await sendAndCheck(app, signedPost(insertAt(text, at, bad)));
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('invalid_json');
    }, runs(200));
    const tricks = fc.constantFrom(
      { field: 'email', value: 'a\ud800@example.com' },
      { field: 'walletType', value: '\udfffEMBEDDED' },
      { field: 'walletType', value: 'EMB\u202eDEDDED' },
      { field: 'email', value: 'buyer@exa\u200bmple.com' },
      { field: 'email', value: 'b\u0000uyer@example.com' },
      { field: 'event', value: 'transfer\uff1asucceeded' },
      { field: 'event', value: 'transfer:succeeded\u200d' },
      { field: 'event', value: 'transfer:succeede\u0064\u0301' },
      { field: 'paymentMethod', value: 'BUY\u00a0WITH\u00a0CARD' },
    );
    await check(fc.record({ body: validTransfer, trick: tricks, bom: fc.constantFrom('', '\ufeff', '\ufeff\ufeff') }), async ({ body, trick, bom }) => {
      const changed = trick.field === 'event' ? { ...body, event: trick.value } : { ...body, result: { ...body.result, [trick.field]: trick.value } };
      const raw = Buffer.from(bom + JSON.stringify(changed), 'utf8');
      const response = await sendAndCheck(app, signedPost(raw));
      if (bom === '\ufeff\ufeff') expect(response.status).toBe(400); // the second one is a character, not a BOM
      if (response.status === 200 && trick.field === 'event') {
        // A look-alike event name is never taken for the real one.
        const row = (app.store as SqliteStore).db.prepare('SELECT event, validation FROM events WHERE id = ?').get(response.json.id) as { event: string; validation: string };
        expect(row).toEqual({ event: trick.value, validation: 'unrecognised' });
      }
    }, runs(200));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('distinct transfer ids never collide (lone surrogates, NUL, case, normalisation), and a repeat is a duplicate', async () => {
    const app = await startFuzzReceiver();
    const id = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
    const pair = fc.oneof(
      fc.tuple(id, id).filter(([a, b]) => a !== b),
      fc.constantFrom<[string, string]>(['A', 'a'], ['\u00e9', 'e\u0301'], ['\ud800', '\ufffd'], ['\ud800', '\udc00'], ['a\u0000b', 'a\u0000c'], ['x', 'x\u0000']),
    );
    let n = 0;
    await check(pair, async ([a, b]) => {
      const event = `fuzz:ids-${n++}`; // a fresh key space for each pair
      const first = await sendAndCheck(app, signedPost(Buffer.from(JSON.stringify({ event, result: { id: a } }))));
      const second = await sendAndCheck(app, signedPost(Buffer.from(JSON.stringify({ event, result: { id: b } }))));
      const again = await sendAndCheck(app, signedPost(Buffer.from(JSON.stringify({ event, result: { id: a } }))));
      expect(first.json).toMatchObject({ duplicate: false });
      expect(second.json, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toMatchObject({ duplicate: false });
      expect(again.json).toMatchObject({ duplicate: true, id: first.json.id });
    }, runs(150));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('signature header variations: missing, empty, duplicated, any name case, sha256= prefix, wrong length, other bodies', async () => {
    const app = await startFuzzReceiver();
    const hexChars = fc.constantFrom(...'0123456789abcdef');
    type Variant = { headers: (body: Buffer) => [string, string][]; expect: 200 | 'missing_signature' | 'invalid_signature' };
    const variant: fc.Arbitrary<Variant> = fc.oneof(
      fc.constant<Variant>({ headers: () => [], expect: 'missing_signature' }),
      fc.constantFrom('', ' ', '\t').map<Variant>((v) => ({ headers: () => [['X-Service-Signature', v]], expect: 'missing_signature' })),
      fc.constantFrom('x-service-signature', 'X-SERVICE-SIGNATURE', 'x-Service-signaturE').map<Variant>((name) => ({ headers: (b) => [[name, sign(b)]], expect: 200 })),
      fc.constantFrom('sha256=', 'SHA256=', 'Sha256=').map<Variant>((prefix) => ({ headers: (b) => [['X-Service-Signature', prefix + sign(b)]], expect: 200 })),
      fc.constantFrom('sha1=', 'sha512=', 'v1,', 'sha256:', 'sha256 =').map<Variant>((prefix) => ({ headers: (b) => [['X-Service-Signature', prefix + sign(b)]], expect: 'invalid_signature' })),
      fc.constant<Variant>({ headers: (b) => [['X-Service-Signature', sign(b).toUpperCase()]], expect: 200 }),
      fc.constant<Variant>({ headers: (b) => [['X-Service-Signature', sign(b)], ['X-Service-Signature', sign(b)]], expect: 'invalid_signature' }),
      fc.constant<Variant>({ headers: (b) => [['X-Service-Signature', sign(b)], ['x-service-signature', 'ff'.repeat(32)]], expect: 'invalid_signature' }),
      fc.string({ unit: hexChars, minLength: 1, maxLength: 130 }).filter((s) => s.length !== 64).map<Variant>((hex) => ({ headers: () => [['X-Service-Signature', hex]], expect: 'invalid_signature' })),
      fc.integer({ min: 1, max: 63 }).map<Variant>((cut) => ({ headers: (b) => [['X-Service-Signature', sign(b).slice(0, cut)]], expect: 'invalid_signature' })),
      fc.constant<Variant>({ headers: (b) => [['X-Service-Signature', sign(Buffer.concat([b, Buffer.from(' ')]))]], expect: 'invalid_signature' }),
      fc.constant<Variant>({ headers: (b) => [['X-Service-Signature', signHmacSha256Hex('not-the-secret', b)]], expect: 'invalid_signature' }),
      fc.constant<Variant>({ headers: (b) => [['X-Service-Signature', sign(b).replace(/.$/, 'g')]], expect: 'invalid_signature' }),
      fc.constant<Variant>({ headers: (b) => [['Webhook-Signature', `v1,${Buffer.from(sign(b), 'hex').toString('base64')}`]], expect: 'missing_signature' }),
    );
    await check(fc.record({ body: validTransfer, variant }), async ({ body, variant: v }) => {
      const raw = Buffer.from(JSON.stringify(body));
      const response = await sendAndCheck(app, { headers: [['Content-Type', 'application/json'], ...v.headers(raw)], body: raw });
      if (v.expect === 200) expect(response.status).toBe(200);
      else {
        expect(response.status).toBe(401);
        expect(response.json.error.code).toBe(v.expect);
      }
    }, runs(400));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('content types and encodings: JSON types accepted, everything else 415 before the body is looked at', async () => {
    const app = await startFuzzReceiver();
    const accepted = ['application/json', 'APPLICATION/JSON', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/vnd.api+json', 'application/cloudevents+json; charset=utf-8', 'application/json ; x=y'];
    const refused = ['text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp', 'application/json-seq', 'application/javascript', '*/*', 'application/*', 'json', 'application/xml', 'application/json5', 'applicaton/json', 'application/ json', ''];
    const arbitrary = fc.record({
      body: validTransfer,
      contentType: fc.oneof(fc.constantFrom(...accepted).map((v) => ({ v, ok: true })), fc.constantFrom(...refused).map((v) => ({ v, ok: false })), fc.constant({ v: null, ok: false })),
      encoding: fc.oneof({ weight: 4, arbitrary: fc.constant<string | null>(null) }, { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-gzip, identity') }),
    });
    await check(arbitrary, async ({ body, contentType, encoding }) => {
      const raw = Buffer.from(JSON.stringify(body));
      const headers: [string, string][] = [['X-Service-Signature', sign(raw)]];
      if (contentType.v !== null) headers.push(['Content-Type', contentType.v]);
      if (encoding !== null) headers.push(['Content-Encoding', encoding]);
      const response = await sendAndCheck(app, { headers, body: raw });
      const ok = contentType.ok && (encoding === null || encoding === 'identity');
      if (ok) expect(response.status).toBe(200);
      else {
        expect(response.status).toBe(415);
        expect(response.json.error.code).toBe('unsupported_media_type');
      }
    }, runs(300));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('bodies over the limit, chunked or with Content-Length: 413, nothing stored; at the limit: stored', async () => {
    const app = await startFuzzReceiver();
    const arbitrary = fc.record({
      body: validTransfer,
      overBy: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 65, max: 3 * MAX_BODY })),
      chunks: fc.array(fc.integer({ min: 1, max: 9000 }), { minLength: 1, maxLength: 6 }),
      framing: fc.constantFrom('chunked', 'content-length'),
      exact: fc.boolean(),
    });
    await check(arbitrary, async ({ body, overBy, chunks, framing, exact }) => {
      const text = JSON.stringify(body);
      const target = exact ? MAX_BODY : MAX_BODY + overBy;
      // Padding inside the JSON keeps the body valid, so only its size decides.
      const padded = text.replace('"walletType"', `"pad":"${'p'.repeat(target - text.length - '"pad":"",'.length)}","walletType"`);
      const raw = Buffer.from(padded);
      expect(raw.length).toBe(target);
      const request = { ...signedPost(raw), ...(framing === 'chunked' && { chunks }) };
      const response = await sendAndCheck(app, request);
      if (exact) expect(response.status).toBe(200);
      else {
        expect(response.status).toBe(413);
        expect(response.json.error).toMatchObject({ code: 'payload_too_large', details: { limit: MAX_BODY } });
      }
    }, runs(200));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('paths and methods: unknown sources 404, bad encodings 400, other methods 405, all with the error body', async () => {
    const app = await startFuzzReceiver();
    const segment = fc.string({ unit: fc.constantFrom(...'abcXYZ019-_.~%2e%2f%00%ff'.split('')), minLength: 1, maxLength: 16 });
    await check(fc.record({ segment, method: fc.constantFrom('POST', 'POST', 'GET', 'PUT', 'DELETE', 'PATCH') }), async ({ segment: s, method }) => {
      const raw = Buffer.from(JSON.stringify(sampleTransferSucceeded()));
      const response = await sendAndCheck(app, { ...signedPost(raw), method, path: `/webhooks/${s}` });
      let decoded: string | null;
      try {
        decoded = decodeURIComponent(s);
      } catch {
        decoded = null;
      }
      if (decoded === null) expect(response.json.error.code, s).toBe('bad_request');
      else if (method !== 'POST') expect(response.json.error.code).toBe('method_not_allowed');
      else expect(response.json.error.code).toBe('unknown_source');
    }, runs(200));
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));

  it('broken HTTP framing (smuggling headers, bad lengths, bad chunks, bad header bytes, oversized heads): a 4xx and a closed connection, nothing stored', async () => {
    const app = await startFuzzReceiver();
    type Framing = (body: Buffer) => Buffer;
    const head = (lines: string[]): string => `POST /webhooks/checkout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`;
    const framings: [string, Framing][] = [
      ['CL and TE together', (b) => Buffer.concat([Buffer.from(head([`X-Service-Signature: ${sign(b)}`, `Content-Length: ${b.length}`, 'Transfer-Encoding: chunked'])), chunked(b, [64])])],
      ['two different Content-Lengths', (b) => Buffer.concat([Buffer.from(head([`X-Service-Signature: ${sign(b)}`, `Content-Length: ${b.length}`, `Content-Length: ${b.length + 1}`])), b])],
      ['negative Content-Length', (b) => Buffer.concat([Buffer.from(head([`X-Service-Signature: ${sign(b)}`, 'Content-Length: -1'])), b])],
      ['non-numeric Content-Length', (b) => Buffer.concat([Buffer.from(head([`X-Service-Signature: ${sign(b)}`, 'Content-Length: 12abc'])), b])],
      ['bad chunk size', (b) => Buffer.concat([Buffer.from(head([`X-Service-Signature: ${sign(b)}`, 'Transfer-Encoding: chunked'])), Buffer.from('zz\r\n'), b, Buffer.from('\r\n0\r\n\r\n')])],
      ['TE other than chunked', (b) => Buffer.concat([Buffer.from(head([`X-Service-Signature: ${sign(b)}`, 'Transfer-Encoding: gzip, chunked, identity'])), b])],
      ['space in a header name', (b) => Buffer.concat([Buffer.from(head([`X-Service Signature: ${sign(b)}`, `Content-Length: ${b.length}`])), b])],
      ['control byte in a header value', (b) => Buffer.concat([Buffer.from(head([`X-Service-Signature: ${sign(b)}\u0001`, `Content-Length: ${b.length}`]), 'latin1'), b])],
      ['NUL in a header value', (b) => Buffer.concat([Buffer.from(head([`X-Service-Signature: ${sign(b).slice(0, 10)}\u0000${sign(b).slice(10)}`, `Content-Length: ${b.length}`]), 'latin1'), b])],
      ['bare LF line ends and garbage request line', (b) => Buffer.concat([Buffer.from(`POST /webhooks/checkout HTTP/1.1 extra\nContent-Length: ${b.length}\n\n`), b])],
      ['unknown HTTP version', (b) => Buffer.concat([Buffer.from(`POST /webhooks/checkout HTTP/9.9\r\nHost: x\r\nContent-Length: ${b.length}\r\n\r\n`), b])],
      ['64 KiB of headers', (b) => Buffer.concat([Buffer.from(head([`X-Service-Signature: ${sign(b)}`, `Content-Length: ${b.length}`, `X-Padding: ${'p'.repeat(64 * 1024)}`])), b])],
      ['obs-fold continuation line', (b) => Buffer.concat([Buffer.from(head([`X-Service-Signature: ${sign(b).slice(0, 32)}`, ` ${sign(b).slice(32)}`, `Content-Length: ${b.length}`])), b])],
    ];
    let bareAnswers = 0;
    await check(fc.record({ body: validTransfer, framing: fc.constantFrom(...framings) }), async ({ body, framing: [name, build] }) => {
      const raw = Buffer.from(JSON.stringify(body));
      const before = counts(app);
      const response = await rawRequest(app.port, build(raw), { timeoutMs: 10_000 });
      expect(response.status, name).toBeGreaterThanOrEqual(400);
      expect(response.status, name).toBeLessThan(500);
      expect(response.closed, name).toBe(true);
      expect(counts(app), name).toEqual(before);
      // Node's HTTP parser refuses these before any route runs; the clientError handler still answers with
      // the common error body.
      if (response.body.length === 0) bareAnswers += 1;
      expect(JSON.parse(response.body.toString()), name).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
    }, runs(150));
    totals.bareParserAnswers = bareAnswers;
    await stillHealthy(app);
  }, timeLimit(60_000, 600_000));
});
