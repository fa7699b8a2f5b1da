import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServeProcess, type CliProcess } from '../helpers/cli-process.js';
import { freeLoopbackPort } from '../helpers/http.js';
import { rulesDirWith } from '../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startWebhookSink } from '../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

async function finished(proc: CliProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code } = await proc.exited;
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

/** The answer's JSON after the `HTTP nnn` line. */
function answer(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.split('\n')[1]!) as Record<string, unknown>;
}

describe('hookrelay send-test against the local instance', { timeout: 60_000 }, () => {
  it('finds the receiver and its generated secret from the settings, repeats a transfer, and sets fields', async () => {
    const sink = await startWebhookSink();
    const dataDir = makeTempDir();
    const port = String(await freeLoopbackPort());
    // The README's example: card purchases of $100 or more are forwarded.
    const rulesDir = rulesDirWith({ 'big.yaml': `id: big\non: [transfer:succeeded]\nwhere:\n  result.totalPriceUsd: { $gte: 100 }\nto:\n  url: ${sink.url}\n` });
    const env = { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_PORT: port };
    // No HOOKRELAY_SECRET: serve generates data/checkout.secret, and send-test finds it there.
    const server = await startServeProcess({ ...env, HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_ALLOW_NETWORKS: '127.0.0.1/32' });
    try {
      const first = await finished(runCli(['send-test'], { env }));
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^HTTP 200\n/);
      expect(answer(first.stdout)).toMatchObject({ id: 1, duplicate: false });
      const transferId = /\(transfer ([0-9a-f-]{36})\)/.exec(first.stderr)?.[1];
      expect(first.stderr).toContain(`POST http://127.0.0.1:${port}/webhooks/checkout (transfer ${transferId})`);

      const repeat = await finished(runCli(['send-test', '--repeat'], { env }));
      expect(repeat.code).toBe(0);
      expect(answer(repeat.stdout)).toMatchObject({ id: 1, duplicate: true });
      expect(repeat.stderr).toContain(`(transfer ${transferId})`);

      const chosen = ['send-test', '--transfer-id', '0b6f3c1e-7a42-4d8e-9c55-2e1f4a9d7b30'];
      expect(answer((await finished(runCli(chosen, { env }))).stdout)).toMatchObject({ id: 2, duplicate: false });
      expect(answer((await finished(runCli(chosen, { env }))).stdout)).toMatchObject({ id: 2, duplicate: true });

      // The default sample ($49.02) stays below the rule; a set price matches it and is forwarded.
      const big = await finished(runCli(['send-test', '--set', 'result.totalPriceUsd=150', '--set', 'result.email=big@example.com'], { env }));
      expect(big.code).toBe(0);
      const [forwarded] = await sink.waitFor(1);
      const body = JSON.parse(forwarded!.rawBody.toString('utf8'));
      expect(body.result).toMatchObject({ totalPriceUsd: 150, email: 'big@example.com' });
      expect(sink.received).toHaveLength(1);
      expect(JSON.parse(readFileSync(join(dataDir, 'send-test-last.json'), 'utf8')).result.totalPriceUsd).toBe(150);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await sink.close();
    }
  });

  it('says where a secret can come from when there is none, and what --repeat needs', async () => {
    const env = { HOOKRELAY_DATA_DIR: makeTempDir(), HOOKRELAY_PORT: '9' };
    const noSecret = await finished(runCli(['send-test'], { env }));
    expect(noSecret.code).toBe(1);
    expect(noSecret.stderr).toContain('No secret for source "checkout": pass --secret, set HOOKRELAY_SECRET, or start hookrelay serve once');
    const noLast = await finished(runCli(['send-test', '--repeat', '--secret', 's'], { env }));
    expect(noLast.code).toBe(1);
    expect(noLast.stderr).toContain('Nothing to repeat: no earlier send-test body');
    const mixed = await finished(runCli(['send-test', '--repeat', '--set', 'result.quantity=3', '--secret', 's'], { env }));
    expect(mixed.stderr).toContain('--repeat sends the last body again exactly');
    const badSet = await finished(runCli(['send-test', '--set', 'totalPriceUsd', '--secret', 's'], { env }));
    expect(badSet.stderr).toContain('--set needs path=value');
  });
});
