import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

/** The rule errors the readiness checks report, once a bad edit has been reported. */
async function reportedRuleErrors(app: TestReceiver): Promise<string> {
  const ready = await eventually(async () => {
    const r = await send(`${app.url}/admin/api/readiness`, { headers: { authorization: `Bearer ${app.adminToken}` } });
    return r.json.checks.rules.lastError ? r : null;
  }, 8000, 'the bad edit to be reported');
  return ready.json.checks.rules.lastError.errors.join('\n');
}

describe('rule hot reload in a running receiver', () => {
  it('applies an edit to new events, keeps the last good set on a bad edit and reports it in the readiness checks', async () => {
    const first = await startWebhookSink();
    const second = await startWebhookSink();
    const dir = rulesDirWith({ 'fwd.yaml': `id: fwd\non: [transfer:succeeded]\nto:\n  url: ${first.url}\n` });
    const app = await startTestReceiver({ rulesDir: dir, delivery: TEST_DELIVERY });
    try {
      await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
      await first.waitFor(1);
      const firstHash = app.rules.current().hash;

      writeFileSync(join(dir, 'fwd.yaml'), `id: fwd\non: [transfer:succeeded]\nto:\n  url: ${second.url}\n`);
      await eventually(() => app.rules.current().hash !== firstHash, 8000, 'the edit to be loaded');
      const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
      await second.waitFor(1);
      const [delivery] = (await app.store.listDeliveries({ eventId: reply.json.id }, { limit: 1 })).items;
      expect(delivery!.ruleSetHash).toBe(app.rules.current().hash);

      const goodHash = app.rules.current().hash;
      writeFileSync(join(dir, 'fwd.yaml'), 'id: fwd\non: [transfer:succeeded]\nto:\n  url: not a url\n');
      expect(await reportedRuleErrors(app)).toMatch(/fwd\.yaml:4 to\.url/);
      expect(app.rules.current().hash).toBe(goodHash);
      await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
      await second.waitFor(2); // still forwarded by the last good rule set
    } finally {
      await app.close();
      await first.close();
      await second.close();
    }
  });
});

describe('a regex that needs backtracking in a hot reload', () => {
  it('is refused with file:line; the last good rules stay in use', async () => {
    const sink = await startWebhookSink();
    const rule = (where: string) => `id: fwd\non: [transfer:succeeded]\nwhere:\n  result.email: { $regex: "${where}" }\nto:\n  url: ${sink.url}\n`;
    const dir = rulesDirWith({ 'fwd.yaml': rule('@example') });
    const app = await startTestReceiver({ rulesDir: dir, delivery: TEST_DELIVERY });
    try {
      const goodHash = app.rules.current().hash;
      writeFileSync(join(dir, 'fwd.yaml'), rule('(?<=buyer)@example'));
      expect(await reportedRuleErrors(app)).toMatch(/fwd\.yaml:4 where\.result\.email: \$regex .* a lookbehind/);
      expect(app.rules.current().hash).toBe(goodHash);
      await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
      await sink.waitFor(1); // still forwarded by the last good rule set
    } finally {
      await app.close();
      await sink.close();
    }
  });
});

describe('destination warnings', () => {
  it('warns at start when an enabled rule targets a literal address the SSRF guard refuses', async () => {
    const dir = rulesDirWith({ 'local.yaml': 'id: local\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9999/hook\n' });
    const refused = await startTestReceiver({ rulesDir: dir, delivery: { allowNetworks: [] } });
    const allowed = await startTestReceiver({ rulesDir: dir, delivery: { allowNetworks: ['127.0.0.1/32'] } });
    try {
      const warning = refused.logLines().find((l) => l.level === 40 && String(l.msg).includes('rule "local"'));
      expect(String(warning?.msg)).toMatch(/127\.0\.0\.1, which is refused: .*add 127\.0\.0\.1\/32 \(or its network\) to HOOKRELAY_ALLOW_NETWORKS/);
      expect(allowed.logLines().some((l) => String(l.msg).includes('rule "local"'))).toBe(false);
    } finally {
      await refused.close();
      await allowed.close();
    }
  });
});
