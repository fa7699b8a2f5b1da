import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../../helpers/temp-dir.js';

/** A real temporary rules directory (removed by `removeTempDirs()` in afterEach). */
export interface RuleDir {
  dir: string;
  /** How the loader names the file in messages: its name in the rules directory. */
  file(name: string): string;
  write(name: string, text: string): Promise<void>;
  remove(name: string): Promise<void>;
}

export async function makeRuleDir(files: Record<string, string> = {}): Promise<RuleDir> {
  const dir = makeTempDir('hookrelay-rules-');
  const ruleDir: RuleDir = {
    dir,
    file: (name) => name,
    write: (name, text) => writeFile(join(dir, name), text),
    remove: (name) => unlink(join(dir, name)),
  };
  for (const [name, text] of Object.entries(files)) await ruleDir.write(name, text);
  return ruleDir;
}

/** A minimal valid rule, with `extra` YAML lines appended (at top level). */
export function ruleYaml(id: string, extra = ''): string {
  return `id: ${id}\non: [transfer:succeeded]\nto:\n  url: https://hooks.example.com/${id}\n${extra}`;
}

export const purchase = {
  event: 'transfer:succeeded',
  result: {
    id: '7f1c9a2e-0c55-4a53-9d6e-3f0d1c2b4a11',
    checkoutId: '2b8e4f0a-5d7c-4e3b-9a1f-6c2d8e0b7a44',
    email: 'buyer@example.com',
    quantity: 2,
    paymentMethod: 'BUY_WITH_CARD',
    totalPriceUsd: 150.5,
    claimedTokens: {
      tokenIds: ['101', '102'],
      transactionHashes: { '0xabc': ['101', '102'] },
    },
  },
};

/** A rule input as ingest builds it: the body and the exact bytes it was parsed from. */
export function purchaseInput(overrides: { event?: string; source?: string; body?: unknown; raw?: Buffer } = {}) {
  const body = overrides.body ?? purchase;
  // Deliberate odd spacing: proves untouched forwarding sends these bytes, not a re-serialisation.
  const raw = overrides.raw ?? Buffer.from(JSON.stringify(body, null, 3));
  return { source: overrides.source ?? 'checkout', event: overrides.event ?? 'transfer:succeeded', body, raw };
}
