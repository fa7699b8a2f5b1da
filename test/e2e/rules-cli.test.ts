import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { runCli, startServeProcess } from '../helpers/cli-process.js';
import { postSigned } from '../helpers/http.js';
import { rulesDirWith, shippedExampleRulesDir } from '../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const BIG_CARD = `id: big-card
on: [transfer:succeeded]
where:
  result.paymentMethod: BUY_WITH_CARD
  result.totalPriceUsd: { $gte: 100 }
transform: |
  { "email": result.email }
to:
  url: https://hooks.example.com/fulfil
  headers: { Authorization: "Bearer \${FULFIL_TOKEN}" }
sign: { scheme: hmac-sha256-hex, secret: "\${FULFIL_SECRET}" }
`;
/** A data dir of the test's own: rules check looks there for a running server, never in ./data. */
const NO_SERVER = { HOOKRELAY_DATA_DIR: makeTempDir() };
const ENV = { ...NO_SERVER, FULFIL_TOKEN: 'secret-token-value', FULFIL_SECRET: 'secret-signing-value' };

describe('hookrelay rules', () => {
  it('check passes on the shipped example rules', async () => {
    const proc = runCli(['rules', 'check', '--rules-dir', shippedExampleRulesDir()], { env: NO_SERVER });
    expect((await proc.exited).code).toBe(0);
    expect(proc.stdout()).toMatch(/rule\(s\) OK/);
  });

  it('check exits 1 listing every error as file:line path: message', async () => {
    const dir = rulesDirWith({
      'a.yaml': 'id: a\non: [transfer:succeeded]\nwhere:\n  result.totalPriceUsd: { $gtee: 1 }\nto:\n  url: http://x.example/\n',
      'b.yaml': 'id: b\non: [transfer:succeeded]\nto:\n  url: http://x.example/\n  methd: POST\n',
    });
    const proc = runCli(['rules', 'check', '--rules-dir', dir], { env: NO_SERVER });
    expect((await proc.exited).code).toBe(1);
    expect(proc.stderr()).toMatch(/a\.yaml:4 where\.result\.totalPriceUsd: .*\$gtee/);
    expect(proc.stderr()).toContain('b.yaml:5 to: unknown key "methd"');
    expect(proc.stderr()).toContain('2 error(s)');
  });

  it('check refuses regexes that need backtracking, in a where and in a transform, as file:line path: message', async () => {
    const dir = rulesDirWith({
      're.yaml': 'id: re\non: [transfer:succeeded]\nwhere:\n  result.email: { $regex: "^(.)\\\\1" }\ntransform: |\n  {\n    "vip": $contains(result.email, /^(?!test)/)\n  }\nto:\n  url: http://x.example/\n',
    });
    const proc = runCli(['rules', 'check', '--rules-dir', dir], { env: NO_SERVER });
    expect((await proc.exited).code).toBe(1);
    expect(proc.stderr()).toMatch(/re\.yaml:4 where\.result\.email: \$regex "\^\(\.\)\\\\1" cannot run in linear time: a backreference/);
    expect(proc.stderr()).toMatch(/re\.yaml:7 transform: regular expression \/\^\(\?!test\)\/ cannot run in linear time: a lookahead/);
  });

  it('check lists all five mistakes of one file in one run, with the near key', async () => {
    const dir = rulesDirWith({
      'five.yaml': 'id: five\non: [transfer:succeeded]\nwehre:\n  result.totalPriceUsd: { $gte: 100 }\ntransform: "{ \'a\': "\nto:\n  url: hooks.example.com\nsign: { scheme: standard-webhooks, secret: abc }\ntimeout: soon\n',
    });
    const proc = runCli(['rules', 'check', '--rules-dir', dir], { env: NO_SERVER });
    expect((await proc.exited).code).toBe(1);
    // Files are named as in the rules directory; the directory is said once, in the count.
    const lines = proc.stderr().trim().split('\n');
    expect(lines).toEqual([
      'five.yaml:3: unknown key "wehre" (did you mean "where"?)',
      expect.stringMatching(/^five\.yaml:5 transform: JSONata syntax error: /),
      'five.yaml:7 to.url: "hooks.example.com" is not an http or https URL',
      'five.yaml:8 sign.secret: must be a whsec_… base64 key: whsec_ followed by base64, e.g. whsec_ and the output of `openssl rand -base64 32`',
      'five.yaml:9 timeout: invalid duration "soon" (use e.g. 500ms, 10s, 5m, 2h)',
      `5 error(s) in ${dir}`,
    ]);
  });

  it('check reports the mistakes under a misspelt key and a JSONata error at its exact line, in one run', async () => {
    const dir = rulesDirWith({
      'a.yaml': 'id: a\non: [transfer:succeeded]\nwehre:\n  result.totalPriceUsd: { $gtee: 100 }\ntransform: |\n  { "id": result.id\nto:\n  url: https://x.example/\n',
    });
    const proc = runCli(['rules', 'check', '--rules-dir', dir], { env: NO_SERVER });
    expect((await proc.exited).code).toBe(1);
    expect(proc.stderr().trim().split('\n').map((line) => line.replace(`${dir}/`, ''))).toEqual([
      'a.yaml:3: unknown key "wehre" (did you mean "where"?)',
      'a.yaml:4 wehre.result.totalPriceUsd: unknown operator $gtee (did you mean "$gte"?)',
      'a.yaml:6 transform: JSONata syntax error: Expected "}" before end of expression',
      `3 error(s) in ${dir}`,
    ]);
  });

  it('check reports a destination the network guard refuses, saying which setting and entry allow it, and that it judged offline', async () => {
    const dir = rulesDirWith({ 'm.yaml': 'id: m\non: [transfer:succeeded]\nto:\n  url: http://169.254.169.254/latest\n' });
    const dataDir = makeTempDir();
    const proc = runCli(['rules', 'check', '--rules-dir', dir], { env: { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_ALLOW_NETWORKS: '169.254.0.0/16' } });
    expect((await proc.exited).code).toBe(1);
    expect(proc.stdout()).toMatch(/^1 rule\(s\) valid \(1 enabled\), rule-set \w+; 1 destination\(s\) refused by this terminal's settings \(offline\)\n$/);
    expect(proc.stderr()).toBe(
      `warning: rule "m" (m.yaml:1) sends to 169.254.169.254, which is refused: 169.254.169.254 is a cloud metadata endpoint; ` +
        'to allow it, list 169.254.169.254/32 itself in HOOKRELAY_ALLOW_NETWORKS (delivery.allowNetworks): a network containing it does not allow it\n' +
        `no running server found for this configuration (no live ${join(dataDir, 'hookrelay.runtime.json')}); judged offline with this terminal's settings: delivery.allowNetworks [169.254.0.0/16], from HOOKRELAY_ALLOW_NETWORKS\n`,
    );
    const allowed = runCli(['rules', 'check', '--rules-dir', dir], { env: { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_ALLOW_NETWORKS: '169.254.169.254/32' } });
    expect((await allowed.exited).code).toBe(0);
    expect(allowed.stdout()).toMatch(/^1 rule\(s\) OK/);
    expect(allowed.stderr()).toContain("judged offline with this terminal's settings: delivery.allowNetworks [169.254.169.254/32], from HOOKRELAY_ALLOW_NETWORKS");
  });

  it('check refuses a rule file over HOOKRELAY_RULES_MAX_FILE_BYTES without reading it', async () => {
    const dir = rulesDirWith({ 'a.yaml': `id: a\non: [transfer:succeeded]\nto:\n  url: https://x.example/\ndescription: "${'x'.repeat(600)}"\n` });
    const proc = runCli(['rules', 'check', '--rules-dir', dir], { env: { ...NO_SERVER, HOOKRELAY_RULES_MAX_FILE_BYTES: '512' } });
    expect((await proc.exited).code).toBe(1);
    expect(proc.stderr()).toMatch(/a\.yaml:1: skipped: its \d+ bytes are over the 512-byte limit for a rule file \(HOOKRELAY_RULES_MAX_FILE_BYTES\)/);
  });

  it('test --file shows the match, the transformed body and the headers without sending or printing secrets', async () => {
    const dir = rulesDirWith({ 'big.yaml': BIG_CARD });
    const eventFile = join(makeTempDir(), 'event.json');
    writeFileSync(eventFile, JSON.stringify(sampleTransferSucceeded({ unitPriceUsd: 80, email: 'big@example.com' })));
    const proc = runCli(['rules', 'test', 'big-card', '--file', eventFile, '--rules-dir', dir], { env: ENV });
    expect((await proc.exited).code).toBe(0);
    const out = proc.stdout();
    expect(out).toMatch(/^match\nrule set [0-9a-f]{12} \(loaded now\)\n/);
    expect(out).toContain('POST https://hooks.example.com/fulfil');
    expect(out).toContain('Authorization: Bearer ${FULFIL_TOKEN}');
    expect(out).toMatch(/X-Service-Signature: [0-9a-f]{64}/);
    expect(out).toContain('{"email":"big@example.com"}');
    expect(out).not.toContain(ENV.FULFIL_TOKEN);
    expect(out).not.toContain(ENV.FULFIL_SECRET);
  });

  it('test --file explains why a rule does not match, with exit 1', async () => {
    const dir = rulesDirWith({ 'big.yaml': BIG_CARD });
    const eventFile = join(makeTempDir(), 'event.json');
    writeFileSync(eventFile, JSON.stringify(sampleTransferSucceeded({ unitPriceUsd: 5, quantity: 1 })));
    const proc = runCli(['rules', 'test', 'big-card', '--file', eventFile, '--rules-dir', dir], { env: ENV });
    expect((await proc.exited).code).toBe(1);
    expect(proc.stdout()).toMatch(/^no match: .*totalPriceUsd/);
  });

  it('test --file says when a matching rule\'s transform fails, with exit 1', async () => {
    const dir = rulesDirWith({ 'big.yaml': BIG_CARD.replace('{ "email": result.email }', 'result.email + 1') });
    const eventFile = join(makeTempDir(), 'event.json');
    writeFileSync(eventFile, JSON.stringify(sampleTransferSucceeded({ unitPriceUsd: 80 })));
    const proc = runCli(['rules', 'test', 'big-card', '--file', eventFile, '--rules-dir', dir], { env: ENV });
    expect((await proc.exited).code).toBe(1);
    expect(proc.stdout()).toMatch(/^match, but the transform fails: transform failed at position \d+: T2001 /);
    const json = runCli(['rules', 'test', 'big-card', '--file', eventFile, '--rules-dir', dir, '--json'], { env: ENV });
    expect((await json.exited).code).toBe(1);
    expect(JSON.parse(json.stdout()).outgoing).toMatchObject({ deadReason: expect.stringMatching(/^transform failed/) });
  });

  it('test --file lists every failing clause with the value found, not only the first', async () => {
    const dir = rulesDirWith({ 'big.yaml': BIG_CARD });
    const eventFile = join(makeTempDir(), 'event.json');
    writeFileSync(eventFile, JSON.stringify(sampleTransferSucceeded({ unitPriceUsd: 5, quantity: 1, paymentMethod: 'BUY_WITH_CRYPTO' })));
    const proc = runCli(['rules', 'test', 'big-card', '--file', eventFile, '--rules-dir', dir], { env: ENV });
    expect((await proc.exited).code).toBe(1);
    const out = proc.stdout();
    expect(out.split('\n')[0]).toBe('no match: where result.paymentMethod $eq "BUY_WITH_CARD": found "BUY_WITH_CRYPTO"; where result.totalPriceUsd $gte 100: found 5.02');
    expect(out).toContain('✓ event $in ["transfer:succeeded"]: found "transfer:succeeded"');
    expect(out).toContain('✗ where result.totalPriceUsd $gte 100: found 5.02');
    const json = runCli(['rules', 'test', 'big-card', '--file', eventFile, '--rules-dir', dir, '--json'], { env: ENV });
    await json.exited;
    expect(JSON.parse(json.stdout())).toMatchObject({ ruleId: 'big-card', ruleSetHash: expect.stringMatching(/^[0-9a-f]{12}$/), matched: false, failing: [expect.stringContaining('paymentMethod'), expect.stringContaining('totalPriceUsd')] });
  });

  it('test --history says which of the last N stored events match', async () => {
    const dataDir = makeTempDir();
    const dir = rulesDirWith({ 'big.yaml': BIG_CARD });
    const server = await startServeProcess({ ...ENV, HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: dir, HOOKRELAY_SECRET: 's' });
    for (const price of [5, 200, 300]) await postSigned(`${server.url}/webhooks/checkout`, sampleTransferSucceeded({ unitPriceUsd: price, quantity: 1 }), 's');
    server.child.kill('SIGTERM');
    await server.exited;
    const proc = runCli(['rules', 'test', 'big-card', '--history', '10', '--data-dir', dataDir, '--rules-dir', dir, '--json'], { env: ENV });
    expect((await proc.exited).code).toBe(0);
    const lines = proc.stdout().trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.matched)).toEqual([true, true, false]); // newest first
    const fromEnv = runCli(['rules', 'test', 'big-card', '--history', '2', '--rules-dir', dir], { env: { ...ENV, HOOKRELAY_DATA_DIR: dataDir } });
    expect((await fromEnv.exited).code).toBe(0);
    expect(fromEnv.stdout()).toContain('2 of the last 2 events match "big-card"');
  });

  it('test --history refuses a data dir without a database, creating nothing', async () => {
    const dataDir = join(makeTempDir(), 'not-there');
    const dir = rulesDirWith({ 'big.yaml': BIG_CARD });
    const proc = runCli(['rules', 'test', 'big-card', '--history', '5', '--data-dir', dataDir, '--rules-dir', dir], { env: ENV });
    expect((await proc.exited).code).toBe(1);
    expect(proc.stderr()).toBe(`hookrelay: No hookrelay database in ${dataDir}, so there is no history to test against. Pass --data-dir <dir> (the one serve uses).\n`);
    expect(proc.stdout()).toBe('');
    expect(existsSync(dataDir)).toBe(false);
    const zero = runCli(['rules', 'test', 'big-card', '--history', '0', '--rules-dir', dir], { env: ENV });
    expect((await zero.exited).code).toBe(1);
    expect(zero.stderr()).toContain('--history needs a whole number of events, at least 1');
  });

  it('schema prints the JSON Schema that docs/rules.schema.json holds', async () => {
    const proc = runCli(['rules', 'schema']);
    expect((await proc.exited).code).toBe(0);
    expect(JSON.parse(proc.stdout())).toEqual(JSON.parse(readFileSync(join(process.cwd(), 'docs/rules.schema.json'), 'utf8')));
  });
});
