import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV_SETTINGS, loadConfig } from '../../src/config.js';

const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');

/** The rows of the "Configuration" table of docs/operations.md that name a variable: variable → file key. */
function documentedVariables(): Map<string, string> {
  const section = operations.slice(operations.indexOf('## Configuration'), operations.indexOf('\n## ', operations.indexOf('## Configuration') + 1));
  const rows = [...section.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| `([^`]+)` \|/gm)];
  return new Map(rows.map((row) => [row[1]!, row[2]!]));
}

describe('environment variables', () => {
  it('docs/operations.md lists every variable of the table, with its file key, and no other', () => {
    const documented = documentedVariables();
    expect([...documented].sort()).toEqual(Object.entries(ENV_SETTINGS).sort());
  });

  it('each variable of the table reaches the setting it names', () => {
    const values: Record<keyof typeof ENV_SETTINGS, string> = {
      HOOKRELAY_PORT: '9001',
      HOOKRELAY_HOST: '0.0.0.0',
      HOOKRELAY_ADMIN_PORT: '9002',
      HOOKRELAY_ADMIN_HOST: '127.0.0.2',
      HOOKRELAY_LOG_FORMAT: 'json',
      HOOKRELAY_PUBLIC_URL: 'https://hooks.example.test/',
      HOOKRELAY_DATA_DIR: '/var/lib/hookrelay',
      HOOKRELAY_RULES_DIR: '/etc/hookrelay/rules',
      HOOKRELAY_RULES_MAX_FILE_BYTES: '2048',
      HOOKRELAY_SECRET: 'env-secret',
      HOOKRELAY_ADMIN_TOKEN: 'x'.repeat(20),
      HOOKRELAY_ALLOW_NETWORKS: '10.0.0.0/8',
      HOOKRELAY_ROLE: 'receiver',
      HOOKRELAY_DATABASE_URL: 'postgres://db.example.test/hookrelay',
      PGPASSWORD: 'pw',
      HOOKRELAY_DURABILITY: 'normal',
      HOOKRELAY_COMMIT_INTERVAL_MS: '3',
      HOOKRELAY_MAX_BODY: '4096',
      HOOKRELAY_MAX_DEPTH: '8',
      HOOKRELAY_LOG_LEVEL: 'warn',
      HOOKRELAY_LOG_REQUESTS: 'errors',
      HOOKRELAY_METRICS_TOKEN: 'scrape-token',
      HOOKRELAY_TRUST_PROXY: '10.1.2.3',
    };
    const config = loadConfig(values);
    expect(config).toMatchObject({
      port: 9001,
      host: '0.0.0.0',
      admin: { port: 9002, host: '127.0.0.2', token: 'x'.repeat(20) },
      logFormat: 'json',
      publicUrl: 'https://hooks.example.test/',
      dataDir: '/var/lib/hookrelay',
      rulesDir: '/etc/hookrelay/rules',
      rulesMaxFileBytes: 2048,
      sources: [{ name: 'checkout', secrets: ['env-secret'] }],
      delivery: { allowNetworks: ['10.0.0.0/8'] },
      role: 'receiver',
      database: { url: 'postgres://db.example.test/hookrelay', password: 'pw' },
      durability: 'normal',
      commitIntervalMs: 3,
      maxBody: 4096,
      maxDepth: 8,
      logLevel: 'warn',
      logRequests: 'errors',
      metrics: { token: 'scrape-token' },
      server: { trustProxy: ['10.1.2.3'] },
    });
  });
});
