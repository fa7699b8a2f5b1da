import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServeProcess } from '../helpers/cli-process.js';
import { send } from '../helpers/http.js';
import { shippedExampleRulesDir } from '../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const ADMIN_TOKEN = 'first-start-admin-token-0123456789';

describe('a fresh install', () => {
  it('starts with the shipped example rules, and its first test event becomes no dead letter', async () => {
    const rulesDir = shippedExampleRulesDir();
    const dataDir = makeTempDir();
    // The settings of a first `npm start`: no allowed networks, a generated secret.
    const server = await startServeProcess({ HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN });
    try {
      const secret = readFileSync(join(dataDir, 'checkout.secret'), 'utf8').trim();
      const sent = runCli(['send-test', '--url', `${server.url}/webhooks/checkout`, '--secret', secret]);
      expect((await sent.exited).code).toBe(0);

      const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const events = await send(`${server.url}/admin/api/events`, { headers });
      expect(events.json.items).toHaveLength(1);
      const deliveries = await send(`${server.url}/admin/api/deliveries`, { headers });
      expect(deliveries.json.items).toEqual([]);
      const rules = await send(`${server.url}/admin/api/rules`, { headers });
      expect(rules.json.rules.map((rule: { id: string; enabled: boolean }) => [rule.id, rule.enabled])).toEqual([
        ['local-sink', false],
        ['slack-card-purchases', false],
      ]);
      // Nothing to act on but the disabled Slack rule's unset variable: no refused destination, no error.
      const loud = server.stdout().trim().split('\n').map((line) => JSON.parse(line)).filter((line) => line.level >= 40);
      expect(loud.map((line) => [line.msg, line.warnings?.length])).toEqual([['rule warnings', 1]]);
      expect(loud[0].warnings[0]).toContain('SLACK_WEBHOOK_URL is not set');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
