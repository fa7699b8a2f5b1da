import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRuleSet } from '../../../src/rules/loader.js';
import { formatRuleFileError } from '../../../src/rules/rule-file-error.js';
import type { LoadResult, RuleSet } from '../../../src/rules/types.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { makeRuleDir, ruleYaml, type RuleDir } from './rule-dir-fixture.js';

let ruleDir: RuleDir;
afterEach(removeTempDirs);

async function load(files: Record<string, string>, env: Record<string, string | undefined> = {}): Promise<LoadResult> {
  ruleDir = await makeRuleDir(files);
  return loadRuleSet(ruleDir.dir, env);
}

async function loadOk(files: Record<string, string>, env: Record<string, string | undefined> = {}): Promise<RuleSet> {
  const result = await load(files, env);
  if (!result.ok) throw new Error(result.errors.map(formatRuleFileError).join('\n'));
  return result.ruleSet;
}

/** The formatted errors: files are named as in the rules directory, wherever it is. */
async function loadErrors(files: Record<string, string>, env: Record<string, string | undefined> = {}): Promise<string[]> {
  const result = await load(files, env);
  expect(result.ok).toBe(false);
  if (result.ok) return [];
  return result.errors.map(formatRuleFileError);
}

const FULFIL = `# yaml-language-server: $schema=../docs/rules.schema.json
id: big-card-purchases
description: Card purchases over $100 to the fulfilment service
on: [transfer:succeeded]
source: checkout
where:
  result.paymentMethod: BUY_WITH_CARD
  result.totalPriceUsd: { $gte: 100 }
transform: |
  { "email": result.email, "tokens": result.claimedTokens.tokenIds }
to:
  url: https://hooks.example.com/fulfil
  method: PUT
  headers: { Authorization: "Bearer \${FULFIL_TOKEN}" }
sign: { scheme: standard-webhooks, secret: "\${FULFIL_SIGNING_SECRET}" }
timeout: 3s
retry: { schedule: [0s, 5s, 1m], retryOn: [409] }
concurrency: 10
rateLimit: { perSecond: 5 }
enabled: true
`;
const FULFIL_ENV = { FULFIL_TOKEN: 'tok-9f8e7d6c5b4a', FULFIL_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };

describe('loading valid rules', () => {
  it('compiles every key of a full rule', async () => {
    const ruleSet = await loadOk({ 'fulfil.yaml': FULFIL }, FULFIL_ENV);
    expect(ruleSet.files).toEqual([ruleDir.file('fulfil.yaml')]);
    expect(ruleSet.hash).toMatch(/^[0-9a-f]{12}$/);
    const [rule] = ruleSet.rules;
    expect(rule).toMatchObject({
      id: 'big-card-purchases',
      description: 'Card purchases over $100 to the fulfilment service',
      file: ruleDir.file('fulfil.yaml'),
      line: 2,
      on: ['transfer:succeeded'],
      source: 'checkout',
      enabled: true,
      destination: { url: 'https://hooks.example.com/fulfil', method: 'PUT', headers: { Authorization: 'Bearer tok-9f8e7d6c5b4a' } },
      signing: { scheme: 'standard-webhooks', secret: FULFIL_ENV.FULFIL_SIGNING_SECRET },
      timeoutMs: 3_000,
      retryScheduleMs: [0, 5_000, 60_000],
      retryOn: [409],
      concurrency: 10,
      rateLimitPerSecond: 5,
      hasTransform: true,
    });
  });

  it('fills defaults: POST, no signing, 10s timeout, the standard retry schedule', async () => {
    const [rule] = (await loadOk({ 'a.yaml': ruleYaml('minimal') })).rules;
    expect(rule).toMatchObject({
      enabled: true,
      destination: { method: 'POST', headers: {} },
      signing: { scheme: 'none' },
      timeoutMs: 10_000,
      retryScheduleMs: [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      retryOn: [],
      hasTransform: false,
    });
    expect(rule?.source).toBeUndefined();
    expect(rule?.concurrency).toBeUndefined();
  });

  it('defaults the hmac-sha256-hex header to X-Service-Signature', async () => {
    const [rule] = (await loadOk({ 'a.yaml': ruleYaml('h', 'sign: { scheme: hmac-sha256-hex, secret: plain-secret }\n') })).rules;
    expect(rule?.signing).toEqual({ scheme: 'hmac-sha256-hex', secret: 'plain-secret', header: 'X-Service-Signature' });
  });

  it('reads several documents per file and top-level lists, files in name order, .yml too', async () => {
    const ruleSet = await loadOk({
      'b.yaml': `${ruleYaml('b1')}---\n${ruleYaml('b2')}---\n# an empty document is ignored\n`,
      'a.yml': `- ${ruleYaml('a1').replaceAll('\n', '\n  ')}\n- ${ruleYaml('a2').replaceAll('\n', '\n  ')}`,
      'notes.txt': 'not a rule file',
      '.b.yaml.swp': 'editor swap file',
    });
    expect(ruleSet.rules.map((rule) => rule.id)).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(ruleSet.rules.map((rule) => rule.line)).toEqual([1, 6, 1, 6]);
    expect(ruleSet.files).toEqual([ruleDir.file('a.yml'), ruleDir.file('b.yaml')]);
  });

  it('treats an empty directory as an empty rule set', async () => {
    const result = await load({});
    expect(result).toMatchObject({ ok: true, warnings: [], ruleSet: { rules: [], files: [] } });
  });

  it('treats a missing directory as an empty rule set, with a warning', async () => {
    ruleDir = await makeRuleDir();
    const missing = join(ruleDir.dir, 'nope');
    const result = await loadRuleSet(missing, {});
    expect(result).toMatchObject({ ok: true, ruleSet: { rules: [] } });
    expect(result.warnings).toEqual([`rules directory ${missing} does not exist; no rules are loaded`]);
  });

  it('hashes file names and contents, not where the directory is', async () => {
    const first = await loadOk({ 'a.yaml': ruleYaml('a') });
    const same = await loadOk({ 'a.yaml': ruleYaml('a') });
    const renamed = await loadOk({ 'b.yaml': ruleYaml('a') });
    const edited = await loadOk({ 'a.yaml': ruleYaml('a', 'enabled: false\n') });
    expect(same.hash).toBe(first.hash);
    expect(renamed.hash).not.toBe(first.hash);
    expect(edited.hash).not.toBe(first.hash);
  });
});

describe('load errors: file:line path: message', () => {
  it('reports an unknown query operator on its line', async () => {
    const text = FULFIL.replace('$gte: 100', '$gtee: 100');
    expect(await loadErrors({ 'fulfil.yaml': text }, FULFIL_ENV)).toEqual([
      'fulfil.yaml:8 where.result.totalPriceUsd: unknown operator $gtee (did you mean "$gte"?)',
    ]);
  });

  it('reports bad YAML', async () => {
    expect(await loadErrors({ 'bad.yaml': 'id: a\nid: b\n' })).toEqual(['bad.yaml:2: Map keys must be unique']);
    const [unclosed] = await loadErrors({ 'bad.yaml': 'id: a\non: [transfer:succeeded\nto: x\n' });
    expect(unclosed).toMatch(/^bad\.yaml:\d+: .+/);
  });

  it('reports unknown keys on the line of the key', async () => {
    expect(await loadErrors({ 'a.yaml': `${ruleYaml('a')}  methd: PUT\ntransfrom: x\n` })).toEqual([
      'a.yaml:5 to: unknown key "methd" (did you mean "method"?)',
      'a.yaml:6: unknown key "transfrom" (did you mean "transform"?)',
    ]);
  });

  it('reports wrong types, missing keys and bad values, in line order', async () => {
    const text = 'id: Bad_Id\nto:\n  url: https://x.example\n  method: GET\ntimeout: soon\nconcurrency: many\nretry:\n  schedule: [0s, 5x]\n  retryOn: [503]\n';
    expect(await loadErrors({ 'a.yaml': text })).toEqual([
      'a.yaml:1 id: must match [a-z0-9][a-z0-9_-]* (lower case, digits, _ and -)',
      'a.yaml:1 on: is required',
      'a.yaml:4 to.method: Invalid option: expected one of "POST"|"PUT"|"PATCH"',
      'a.yaml:5 timeout: invalid duration "soon" (use e.g. 500ms, 10s, 5m, 2h)',
      'a.yaml:6 concurrency: Invalid input: expected number, received string',
      'a.yaml:8 retry.schedule[1]: invalid duration "5x" (use e.g. 500ms, 10s, 5m, 2h)',
      'a.yaml:9 retry.retryOn[0]: Too big: expected number to be <=499',
    ]);
  });

  it('checks the order option: unknown keys with a suggestion, a dot path, and keep-blocked only with a bound', async () => {
    expect(await loadErrors({ 'a.yaml': ruleYaml('a', 'order:\n  key: result.checkoutId\n  maxBlockFor: 1h\n') })).toEqual([
      'a.yaml:7 order: unknown key "maxBlockFor" (did you mean "maxBlockedFor"?)',
    ]);
    expect(await loadErrors({ 'a.yaml': ruleYaml('a', 'order:\n  key: result..id\n') })).toEqual([
      'a.yaml:6 order.key: must be a dot path into the event body, e.g. result.checkoutId',
    ]);
    expect(await loadErrors({ 'a.yaml': ruleYaml('a', 'order:\n  key: result.checkoutId\n  onBlockedTimeout: keep-blocked\n') })).toEqual([
      'a.yaml:5 order.maxBlockedFor: is required with onBlockedTimeout: keep-blocked (the time after which the key counts as overdue)',
    ]);
    expect((await load({ 'a.yaml': ruleYaml('a', 'order:\n  key: result.checkoutId\n  maxBlockedFor: 1h\n  onBlockedTimeout: keep-blocked\n') })).ok).toBe(true);
  });

  it('reports durations out of range', async () => {
    expect(await loadErrors({ 'a.yaml': ruleYaml('a', 'timeout: 10m\nretry: { schedule: [0s, 8d] }\n') })).toEqual([
      'a.yaml:5 timeout: must be at most 5m',
      'a.yaml:6 retry.schedule[1]: must be at most 7d',
    ]);
    expect(await loadErrors({ 'a.yaml': ruleYaml('a', 'timeout: 0s\n') })).toEqual(['a.yaml:5 timeout: must be longer than 0']);
  });

  it('reports a JSONata syntax error on the line inside the transform', async () => {
    const text = `${ruleYaml('t')}transform: |\n  {\n    "email": result.email,\n    "n": (result.quantity\n  }\n`;
    const [error] = await loadErrors({ 't.yaml': text });
    expect(error).toMatch(/^t\.yaml:9 transform: JSONata syntax error: /);
  });

  it('puts a JSONata error at the end of a transform on its last line, not the line after', async () => {
    const unclosed = `${ruleYaml('t')}transform: |\n  {\n    "email": result.email\nenabled: true\n`;
    const dangling = `${ruleYaml('u')}transform: |\n  result.id +\n\n`;
    const below = `${ruleYaml('v')}transform:\n  '{ "a": ) }'\n`;
    expect(await loadErrors({ 't.yaml': unclosed, 'u.yaml': dangling, 'v.yaml': below })).toEqual([
      't.yaml:7 transform: JSONata syntax error: Expected "}" before end of expression',
      'u.yaml:6 transform: JSONata syntax error: Unexpected end of expression',
      'v.yaml:6 transform: JSONata syntax error: The symbol ")" cannot be used as a unary operator',
    ]);
  });

  it('says a missing field is required, at any depth and in a list of rules', async () => {
    const text = '- id: a\n  on: [transfer:succeeded]\n  to: { method: POST }\n  sign: { scheme: hmac-sha256-hex }\n  rateLimit: {}\n';
    expect(await loadErrors({ 'a.yaml': text })).toEqual([
      'a.yaml:3 [0].to.url: is required',
      'a.yaml:4 [0].sign.secret: is required',
      'a.yaml:5 [0].rateLimit.perSecond: is required',
    ]);
  });

  it('checks what is under a misspelt top-level key as the key it is near, in the same run', async () => {
    const text = [
      'id: a',
      'on: [transfer:succeeded]',
      'wehre:',
      '  result.totalPriceUsd: { $gtee: 100 }',
      'too:',
      '  url: hooks.example.com/in',
      'transfrom: "result.id +"',
      '',
    ].join('\n');
    expect(await loadErrors({ 'a.yaml': text })).toEqual([
      'a.yaml:3: unknown key "wehre" (did you mean "where"?)',
      'a.yaml:4 wehre.result.totalPriceUsd: unknown operator $gtee (did you mean "$gte"?)',
      'a.yaml:5: unknown key "too" (did you mean "to"?)',
      'a.yaml:6 too.url: "hooks.example.com/in" is not an http or https URL',
      'a.yaml:7: unknown key "transfrom" (did you mean "transform"?)',
      'a.yaml:7 transfrom: JSONata syntax error: Unexpected end of expression',
    ]);
  });

  it('reports an unset environment variable by name, never by value', async () => {
    const errors = await loadErrors({ 'fulfil.yaml': FULFIL }, { FULFIL_SIGNING_SECRET: FULFIL_ENV.FULFIL_SIGNING_SECRET });
    expect(errors).toEqual(['fulfil.yaml:14 to.headers.Authorization: environment variable FULFIL_TOKEN is not set']);
  });

  it('reports malformed references', async () => {
    expect(await loadErrors({ 'a.yaml': ruleYaml('a', 'sign: { scheme: hmac-sha256-hex, secret: "${SECRET" }\n') })).toEqual([
      'a.yaml:5 sign.secret: "${" is not closed with "}"',
    ]);
  });

  it('reports a URL that is not http(s), written or resolved', async () => {
    const literal = 'id: a\non: ["*"]\nto: { url: "ftp://files.example.com/in" }\n';
    expect(await loadErrors({ 'a.yaml': literal })).toEqual(['a.yaml:3 to.url: "ftp://files.example.com/in" is not an http or https URL']);
    const fromEnv = 'id: a\non: ["*"]\nto: { url: "${TARGET}" }\n';
    expect(await loadErrors({ 'a.yaml': fromEnv }, { TARGET: 'file:///etc/passwd' })).toEqual([
      'a.yaml:3 to.url: "${TARGET}" does not resolve to an http or https URL',
    ]);
  });

  it('reports duplicate ids across files, naming both places', async () => {
    expect(await loadErrors({ 'a.yaml': ruleYaml('same'), 'b.yaml': `# second\n${ruleYaml('same')}` })).toEqual([
      'b.yaml:2 id: duplicate id "same" (also defined at a.yaml:1)',
    ]);
  });

  it('names the list item a problem is in', async () => {
    const text = `- ${ruleYaml('a1').replaceAll('\n', '\n  ')}\n- id: a2\n  on: [x]\n  to: { url: "not a url" }\n`;
    expect(await loadErrors({ 'a.yaml': text })).toEqual(['a.yaml:8 [1].to.url: "not a url" is not an http or https URL']);
  });

  it('reports headers hookrelay sets itself', async () => {
    const text = ruleYaml('a').replace('  url:', '  headers: { Content-Type: text/plain }\n  url:');
    expect(await loadErrors({ 'a.yaml': text })).toEqual([
      'a.yaml:4 to.headers.Content-Type: header name is set by hookrelay and cannot be overridden',
    ]);
  });

  it('forwards chosen received headers, lower case; refuses hop-by-hop and framing headers', async () => {
    const [rule] = (await loadOk({ 'a.yaml': ruleYaml('a').replace('  url:', '  forwardHeaders: [X-Service-Signature, x-trace]\n  url:') })).rules;
    expect(rule!.destination.forwardHeaders).toEqual(['x-service-signature', 'x-trace']);
    expect(rule!.describe().to.forwardHeaders).toEqual(['x-service-signature', 'x-trace']);
    expect((await loadOk({ 'b.yaml': ruleYaml('b') })).rules[0]!.destination.forwardHeaders).toEqual([]);
    const text = ruleYaml('a').replace('  url:', '  forwardHeaders: [Upgrade, content-length, "bad header"]\n  url:');
    expect(await loadErrors({ 'a.yaml': text })).toEqual([
      'a.yaml:4 to.forwardHeaders[0]: is a hop-by-hop header and is never forwarded',
      'a.yaml:4 to.forwardHeaders[1]: is set by hookrelay and cannot be overridden',
      'a.yaml:4 to.forwardHeaders[2]: must be a valid HTTP header name',
    ]);
  });

  it('reports an undecodable standard-webhooks secret without quoting it', async () => {
    const text = ruleYaml('a', 'sign: { scheme: standard-webhooks, secret: "${SIGNING_SECRET}" }\n');
    expect(await loadErrors({ 'a.yaml': text }, { SIGNING_SECRET: 'whsec_not base64!' })).toEqual([
      'a.yaml:5 sign.secret: must be a whsec_… base64 key: whsec_ followed by base64, e.g. whsec_ and the output of `openssl rand -base64 32`',
    ]);
  });

  it('reports every problem of a rule in one run, also behind a misspelt key, with the near key', async () => {
    const text = [
      'id: Big Orders',
      'on: [transfer:succeeded]',
      'wehre:',
      '  result.totalPriceUsd: { $gte: 100 }',
      'transform: "{ \'total\': result.totalPriceUsd"',
      'to:',
      '  url: hooks.example.com/in',
      '  methd: PUT',
      'sign: { scheme: standard-webhooks, secret: abc }',
      'timeout: soon',
      '',
    ].join('\n');
    expect(await loadErrors({ 'a.yaml': text })).toEqual([
      'a.yaml:1 id: must match [a-z0-9][a-z0-9_-]* (lower case, digits, _ and -)',
      'a.yaml:3: unknown key "wehre" (did you mean "where"?)',
      expect.stringMatching(/^a\.yaml:5 transform: JSONata syntax error: /),
      'a.yaml:7 to.url: "hooks.example.com/in" is not an http or https URL',
      'a.yaml:8 to: unknown key "methd" (did you mean "method"?)',
      'a.yaml:9 sign.secret: must be a whsec_… base64 key: whsec_ followed by base64, e.g. whsec_ and the output of `openssl rand -base64 32`',
      'a.yaml:10 timeout: invalid duration "soon" (use e.g. 500ms, 10s, 5m, 2h)',
    ]);
  });

  it('suggests only keys that belong where the unknown one is', async () => {
    const errors = await loadErrors({ 'a.yaml': ruleYaml('a', 'sign: { scheme: standard-webhooks, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", headr: X }\nxyzzy: 1\n') });
    expect(errors).toEqual(['a.yaml:5 sign: unknown key "headr"', 'a.yaml:6: unknown key "xyzzy"']);
  });

  it('collects every error across every file', async () => {
    const errors = await loadErrors({
      'a.yaml': ruleYaml('a', 'timeout: soon\n'),
      'b.yaml': 'id: b\n: [\n',
      'c.yaml': ruleYaml('c', 'where: { x: { $bad: 1 } }\n'),
    });
    expect(errors.map((error) => error.split(':')[0])).toEqual(['a.yaml', 'b.yaml', 'c.yaml']);
  });
});

describe('secrets', () => {
  it('loads a disabled rule whose variable is unset, with a warning', async () => {
    const text = 'id: slack\non: ["*"]\nto:\n  url: ${SLACK_WEBHOOK_URL}\nenabled: false\n';
    const result = await load({ 'slack.yaml': text });
    expect(result.ok).toBe(true);
    expect(result.warnings).toEqual([
      `${ruleDir.file('slack.yaml')}:4 to.url: environment variable SLACK_WEBHOOK_URL is not set (the rule is disabled, so it still loads)`,
    ]);
  });

  it('never shows resolved values in describe(), JSON or inspect output, or errors', async () => {
    const ruleSet = await loadOk(
      { 'fulfil.yaml': FULFIL, 'literal.yaml': ruleYaml('lit', 'sign: { scheme: hmac-sha256-hex, secret: literal-s3cret }\n') },
      FULFIL_ENV,
    );
    const [fulfil, literal] = ruleSet.rules;
    expect(fulfil?.describe()).toMatchObject({
      to: { headers: { Authorization: 'Bearer ${FULFIL_TOKEN}' } },
      sign: { scheme: 'standard-webhooks', secret: '${FULFIL_SIGNING_SECRET}' },
      env: ['FULFIL_TOKEN', 'FULFIL_SIGNING_SECRET'],
    });
    expect(literal?.describe().sign).toEqual({ scheme: 'hmac-sha256-hex', secret: '[redacted]', header: 'X-Service-Signature' });

    const { inspect } = await import('node:util');
    const outputs = [JSON.stringify(ruleSet), inspect(ruleSet, { depth: 10 }), JSON.stringify(ruleSet.rules.map((rule) => rule.describe()))];
    for (const output of outputs) {
      for (const secret of [...Object.values(FULFIL_ENV), 'literal-s3cret']) expect(output).not.toContain(secret);
    }
    const badUrl = await loadErrors({ 'a.yaml': 'id: a\non: ["*"]\nto: { url: "${TARGET}" }\n' }, { TARGET: 'gopher://s3cret-host' });
    expect(badUrl.join('\n')).not.toContain('s3cret-host');
  });
});
