import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { HookrelayError } from '../../src/errors.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

function configError(fn: () => unknown): HookrelayError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HookrelayError);
    return err as HookrelayError;
  }
  throw new Error('expected loadConfig to throw');
}

describe('loadConfig', () => {
  it('has working defaults: loopback port 8080, ./data, ./rules, full durability, 1 MiB, one checkout source', () => {
    const config = loadConfig({});
    expect(config.admin).toEqual({ host: '127.0.0.1', streams: { max: 100, heartbeatMs: 15_000, bufferBytes: 1024 * 1024, stallTimeoutMs: 30_000 }, authFailures: { max: 10, windowMs: 60_000 } });
    expect(config.server).toMatchObject({ maxBufferedBytes: 64 * 1024 * 1024, maxConnections: 1024, trustProxy: [] });
    expect(config.logFormat).toBeUndefined();
    expect(config).toMatchObject({ port: 8080, host: '127.0.0.1', durability: 'full', maxBody: 1024 * 1024, maxDepth: 64, rulesMaxFileBytes: 1024 * 1024, logLevel: 'info' });
    expect(config.commitIntervalMs).toBeUndefined(); // each store's own default
    expect(config.dataDir).toBe(join(process.cwd(), 'data'));
    expect(config.rulesDir).toBe(join(process.cwd(), 'rules'));
    expect(config.sources).toEqual([expect.objectContaining({ name: 'checkout', scheme: 'hmac-sha256-hex', secrets: [], signatureHeader: 'x-service-signature' })]);
  });

  it('reads environment variables, with comma-separated secrets for rotation and human sizes', () => {
    const config = loadConfig({ HOOKRELAY_PORT: '9000', HOOKRELAY_SECRET: 'a, b ,c', HOOKRELAY_MAX_BODY: '2mb', HOOKRELAY_MAX_DEPTH: '16', HOOKRELAY_DURABILITY: 'normal', HOOKRELAY_LOG_LEVEL: 'warn', HOOKRELAY_COMMIT_INTERVAL_MS: '0.5', HOOKRELAY_RULES_MAX_FILE_BYTES: '64kb' });
    expect(config).toMatchObject({ port: 9000, maxBody: 2 * 1024 * 1024, maxDepth: 16, rulesMaxFileBytes: 64 * 1024, durability: 'normal', logLevel: 'warn', commitIntervalMs: 0.5 });
    expect(config.sources[0]!.secrets).toEqual(['a', 'b', 'c']);
  });

  it('lets the YAML file override environment variables and declare several sources', () => {
    const dir = makeTempDir();
    const file = join(dir, 'hookrelay.yaml');
    writeFileSync(file, 'port: 7000\nsources:\n  - name: checkout\n  - name: partner\n    scheme: standard-webhooks\n    secrets: [whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw]\n');
    const config = loadConfig({ HOOKRELAY_CONFIG: file, HOOKRELAY_PORT: '9000', HOOKRELAY_SECRET: 'from-env' });
    expect(config.port).toBe(7000);
    expect(config.sources.map((s) => [s.name, s.scheme, s.secrets])).toEqual([
      ['checkout', 'hmac-sha256-hex', ['from-env']],
      ['partner', 'standard-webhooks', ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']],
    ]);
  });

  it('merges a file section with the environment key by key: a delivery section keeps HOOKRELAY_ALLOW_NETWORKS', () => {
    const file = join(makeTempDir(), 'hookrelay.yaml');
    writeFileSync(file, 'delivery:\n  concurrency: 32\n');
    const config = loadConfig({ HOOKRELAY_CONFIG: file, HOOKRELAY_ALLOW_NETWORKS: '127.0.0.1/32' });
    expect(config.delivery).toMatchObject({ concurrency: 32, allowNetworks: ['127.0.0.1/32'] });
  });

  it('gives the delivery thread nice 10 unless told otherwise, and refuses a value Linux has no nice for', () => {
    expect(loadConfig({}).delivery.threadNice).toBe(10);
    const file = join(makeTempDir(), 'hookrelay.yaml');
    writeFileSync(file, 'delivery:\n  threadNice: 0\n');
    expect(loadConfig({ HOOKRELAY_CONFIG: file }).delivery.threadNice).toBe(0);
    writeFileSync(file, 'delivery:\n  threadNice: 20\n');
    expect(configError(() => loadConfig({ HOOKRELAY_CONFIG: file })).message).toContain('delivery.threadNice');
  });

  it('bounds transforms by default (1 s, 1 MiB, 64 MiB heap, 2 threads) and reads each limit from the file', () => {
    expect(loadConfig({}).rules.transform).toEqual({ timeoutMs: 1_000, maxOutputBytes: 1024 * 1024, maxMemoryMb: 64, workers: 2 });
    const file = join(makeTempDir(), 'hookrelay.yaml');
    writeFileSync(file, 'rules:\n  transform:\n    timeoutMs: 250\n    maxOutputBytes: 64kb\n');
    expect(loadConfig({ HOOKRELAY_CONFIG: file }).rules.transform).toEqual({ timeoutMs: 250, maxOutputBytes: 64 * 1024, maxMemoryMb: 64, workers: 2 });
    writeFileSync(file, 'rules:\n  transform:\n    timeoutMs: 0\n');
    expect(configError(() => loadConfig({ HOOKRELAY_CONFIG: file })).message).toContain('rules.transform.timeoutMs');
  });

  it('takes only real booleans for switches: a quoted "false" is refused, never read as true', () => {
    const file = join(makeTempDir(), 'hookrelay.yaml');
    writeFileSync(file, 'delivery:\n  enabled: "false"\n');
    expect(configError(() => loadConfig({ HOOKRELAY_CONFIG: file })).message).toContain('delivery.enabled');
    writeFileSync(file, 'delivery:\n  enabled: false\n');
    expect(loadConfig({ HOOKRELAY_CONFIG: file }).delivery.enabled).toBe(false);
  });

  it('reads the admin listener and the log format from the environment', () => {
    const config = loadConfig({ HOOKRELAY_HOST: '0.0.0.0', HOOKRELAY_ADMIN_PORT: '8081', HOOKRELAY_ADMIN_HOST: '10.0.0.5', HOOKRELAY_ADMIN_TOKEN: 'a'.repeat(16), HOOKRELAY_LOG_FORMAT: 'json' });
    expect(config).toMatchObject({ host: '0.0.0.0', logFormat: 'json', admin: { port: 8081, host: '10.0.0.5', token: 'a'.repeat(16) } });
  });

  it('uses SQLite unless a PostgreSQL URL is given; the password comes from the URL or PGPASSWORD', () => {
    expect(loadConfig({}).database).toEqual({ poolSize: 10, statementTimeoutMs: 30_000, lockTimeoutMs: 5_000, connectTimeoutMs: 5_000, commitTimeoutMs: 5_000, startupTimeoutMs: 60_000, notifications: true, sqliteCacheSize: 2 * 1024 * 1024 });
    expect(loadConfig({ PGPASSWORD: 'unused' }).database.password).toBeUndefined();
    const fromEnv = loadConfig({ HOOKRELAY_DATABASE_URL: 'postgres://hookrelay@db:5432/hookrelay?sslmode=verify-full', PGPASSWORD: 'pw' });
    expect(fromEnv.database).toMatchObject({ url: 'postgres://hookrelay@db:5432/hookrelay?sslmode=verify-full', password: 'pw' });
    const dir = makeTempDir();
    const file = join(dir, 'hookrelay.yaml');
    writeFileSync(file, 'database:\n  url: postgresql://hookrelay@db/hookrelay\n  poolSize: 4\n  notifications: false\n');
    expect(loadConfig({ HOOKRELAY_CONFIG: file, PGPASSWORD: 'pw' }).database).toMatchObject({ url: 'postgresql://hookrelay@db/hookrelay', poolSize: 4, notifications: false, password: 'pw' });
    const wrong = configError(() => loadConfig({ HOOKRELAY_DATABASE_URL: 'mysql://db/x' }));
    expect(wrong.message).toContain('HOOKRELAY_DATABASE_URL (database.url): expected a postgres:// or postgresql:// URL');
  });

  it('is frozen all the way down', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.sources[0])).toBe(true);
  });

  it.each([
    [{ HOOKRELAY_PORT: 'abc' }, 'HOOKRELAY_PORT'],
    [{ HOOKRELAY_PORT: '70000' }, 'HOOKRELAY_PORT'],
    [{ HOOKRELAY_DURABILITY: 'sometimes' }, 'HOOKRELAY_DURABILITY'],
    [{ HOOKRELAY_COMMIT_INTERVAL_MS: '-1' }, 'HOOKRELAY_COMMIT_INTERVAL_MS'],
    [{ HOOKRELAY_MAX_BODY: 'lots' }, 'HOOKRELAY_MAX_BODY'],
    [{ HOOKRELAY_MAX_DEPTH: '513' }, 'HOOKRELAY_MAX_DEPTH'],
    [{ HOOKRELAY_LOG_LEVEL: 'loud' }, 'HOOKRELAY_LOG_LEVEL'],
    [{ HOOKRELAY_LOG_FORMAT: 'xml' }, 'HOOKRELAY_LOG_FORMAT'],
    [{ HOOKRELAY_LOG_REQUESTS: 'some' }, 'HOOKRELAY_LOG_REQUESTS'],
    [{ HOOKRELAY_ADMIN_PORT: 'eighty' }, 'HOOKRELAY_ADMIN_PORT'],
    [{ HOOKRELAY_ADMIN_PORT: '8081', HOOKRELAY_ADMIN_TOKEN: 'short' }, 'HOOKRELAY_ADMIN_TOKEN'],
  ])('names the setting that is invalid: %o', (env, name) => {
    const err = configError(() => loadConfig(env));
    expect(err.code).toBe('invalid_config');
    expect(err.message).toContain(name);
  });

  it('names file keys, unknown keys and duplicate sources', () => {
    const dir = makeTempDir();
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'prot: 1\nsources:\n  - name: a\n  - name: b\n    scheme: rot13\n');
    const err = configError(() => loadConfig({ HOOKRELAY_CONFIG: file }));
    expect(err.message).toContain('prot');
    expect(err.message).toMatch(/sources\.1\.scheme/);
    writeFileSync(file, 'sources:\n  - name: a\n  - name: a\n');
    expect(configError(() => loadConfig({ HOOKRELAY_CONFIG: file })).message).toMatch(/duplicate source name "a"/);
  });

  it('refuses a standard-webhooks source secret that is not a whsec_ base64 key, without quoting it', () => {
    const file = join(makeTempDir(), 'sources.yaml');
    writeFileSync(file, 'sources:\n  - name: shop\n    scheme: standard-webhooks\n    secrets: [whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, not-base64-s3cret]\n');
    const err = configError(() => loadConfig({ HOOKRELAY_CONFIG: file }));
    expect(err.message).toMatch(/sources \(sources\.0\.secrets\.1\): must be a whsec_… base64 key/);
    expect(err.message).not.toContain('not-base64-s3cret');
    writeFileSync(file, 'sources:\n  - name: shop\n    scheme: standard-webhooks\n    secrets: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n');
    expect(loadConfig({ HOOKRELAY_CONFIG: file }).sources[0]?.secrets).toEqual(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']);
  });

  it('reports an unreadable or malformed config file', () => {
    expect(configError(() => loadConfig({ HOOKRELAY_CONFIG: '/nonexistent/hookrelay.yaml' })).message).toContain('HOOKRELAY_CONFIG');
    const dir = makeTempDir();
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'port: [1,\n');
    expect(configError(() => loadConfig({ HOOKRELAY_CONFIG: file })).message).toContain(file);
  });

  it('takes the trusted proxies as addresses or CIDRs, and refuses a buffer budget smaller than one body', () => {
    expect(loadConfig({ HOOKRELAY_TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,::1' }).server.trustProxy).toEqual(['10.0.0.0/8', '192.168.1.7', '::1']);
    expect(configError(() => loadConfig({ HOOKRELAY_TRUST_PROXY: '10.0.0.0/8,lb.internal' })).message).toMatch(/HOOKRELAY_TRUST_PROXY.*lb\.internal/);
    expect(loadConfig({}, { server: { maxBufferedBytes: '8mb' } }).server.maxBufferedBytes).toBe(8 * 1024 * 1024);
    expect(configError(() => loadConfig({ HOOKRELAY_MAX_BODY: '2mb' }, { server: { maxBufferedBytes: '1mb' } })).message).toContain('server.maxBufferedBytes');
  });
});
