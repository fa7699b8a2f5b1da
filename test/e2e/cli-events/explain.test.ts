import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { ADMIN_TOKEN, hookrelay, postAll, startServer } from './cli-harness.js';

afterAll(() => removeTempDirs());

const CRYPTO_ONLY = `id: crypto-only
on: [transfer:succeeded]
where:
  result.paymentMethod: BUY_WITH_CRYPTO
  result.quantity: { $gte: 5 }
  result.couponCode: { $exists: true }
to:
  url: http://127.0.0.1:9/crypto
`;
const EVERYTHING = `id: everything
on: [transfer:succeeded]
transform: '{ "email": result.email }'
to:
  url: http://127.0.0.1:9/all
retry:
  schedule: [1h]
`;

const FAILING_LINES = [
  '✗ where result.paymentMethod $eq "BUY_WITH_CRYPTO": found "BUY_WITH_CARD"',
  '✗ where result.quantity $gte 5: found 2',
  '✗ where result.couponCode $exists true: absent',
];


function withoutPreviewTime(explanation: { rules: { outgoing?: { headers: Record<string, string> } }[] }): unknown {
  for (const rule of explanation.rules) {
    if (!rule.outgoing) continue;
    expect(rule.outgoing.headers['X-Hookrelay-Timestamp']).toMatch(/^\d{10}$/);
    delete rule.outgoing.headers['X-Hookrelay-Timestamp'];
  }
  return explanation;
}

describe('hookrelay events explain', { timeout: 120_000 }, () => {
  it('lists all three failing clauses with the values found, locally and through --url alike, and shows what a match would send', async () => {
    const server = await startServer({ 'a.yaml': CRYPTO_ONLY, 'b.yaml': EVERYTHING });
    try {
      const [id] = await postAll(server.webhook, [sampleTransferSucceeded({ email: 'ann@example.com', quantity: 2 })]);
      const remote = ['--url', server.url];
      const local = ['--data-dir', server.dataDir, '--rules-dir', server.rulesDir, '--direct'];

      const text = await hookrelay(['events', 'explain', String(id), ...remote], { HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN });
      expect(text.code, text.stderr).toBe(0);
      const lines = text.stdout.split('\n').map((line) => line.trim());
      expect(lines[0]).toBe(`event #${id} transfer:succeeded on checkout: 1 of 2 rules match (everything)`);
      expect(lines).toContain('✗ crypto-only  no match: 3 failing clauses  (a.yaml:1)');
      for (const line of FAILING_LINES) expect(lines).toContain(line);
      expect(lines).toContain('POST http://127.0.0.1:9/all');
      expect(lines).toContain('{"email":"ann@example.com"}');
      expect(lines).toContain('destination allowed by the network guard (127.0.0.1)');

      const remoteJson = await hookrelay(['events', 'explain', String(id), ...remote, '--json'], { HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN });
      expect(lines[1]).toBe(`rule set ${remoteJson.json.ruleSetHash} (loaded now)`);
      const localJson = await hookrelay(['events', 'explain', String(id), ...local, '--json'], { HOOKRELAY_ALLOW_NETWORKS: server.env.HOOKRELAY_ALLOW_NETWORKS });
      expect(localJson.code, localJson.stderr).toBe(0);
      // The preview's X-Hookrelay-Timestamp is the second each explanation was made: the rest is alike.
      expect(withoutPreviewTime(localJson.json)).toEqual(withoutPreviewTime(remoteJson.json));
      expect(localJson.json.rules[0].failing).toHaveLength(3);

      const oneRule = await hookrelay(['events', 'explain', String(id), ...local, '--rule', 'crypto-only']);
      expect(oneRule.stdout).toContain('0 of 1 rule match');
      for (const line of FAILING_LINES) expect(oneRule.stdout).toContain(line);

      const unknown = await hookrelay(['events', 'explain', String(id), ...local, '--rule', 'nope']);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain('No rule "nope"');

      // Rules changed since the event arrived: the answer names today's rule set and says so.
      writeFileSync(join(server.rulesDir, 'b.yaml'), EVERYTHING.replace('/all', '/all-new'));
      const changed = await hookrelay(['events', 'explain', String(id), ...local]);
      const changedLines = changed.stdout.split('\n');
      const today = changedLines[1]!.match(/^rule set ([0-9a-f]+) \(loaded now\)$/)?.[1];
      expect(today).toMatch(/^[0-9a-f]{12}$/);
      expect(today).not.toBe(remoteJson.json.ruleSetHash);
      expect(changedLines[2]).toBe(`note: The event's stored deliveries were planned under rule set ${remoteJson.json.ruleSetHash}, not the current ${today}: what was sent then may differ from this explanation.`);
    } finally {
      await server.stop();
    }
  });

  it('explains a body from a file against the local rules, without a data dir', async () => {
    const rulesDir = makeTempDir('hookrelay-rules-');
    writeFileSync(join(rulesDir, 'a.yaml'), CRYPTO_ONLY);
    const file = join(makeTempDir(), 'event.json');
    writeFileSync(file, JSON.stringify(sampleTransferSucceeded({ quantity: 2 })));
    const result = await hookrelay(['events', 'explain', '--file', file, '--rules-dir', rulesDir, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ event: { id: null, source: 'checkout', event: 'transfer:succeeded' }, matchedRuleIds: [], plannedUnder: [], ruleSetNote: null });
    expect(result.json.rules[0].failing).toHaveLength(3);
  });
});
