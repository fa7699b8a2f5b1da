import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clientConfig, redactUrl, type PostgresSettings } from '../../../../src/store/postgres/connection.js';
import { makeTempDir, removeTempDirs } from '../../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const settings = (url: string, password?: string): PostgresSettings => ({
  url, ...(password !== undefined && { password }), poolSize: 2, statementTimeoutMs: 1_000, lockTimeoutMs: 500, connectTimeoutMs: 300, notifications: true,
});

describe('PostgreSQL connection settings', () => {
  it('verifies the server with the CA the URL names (sslmode, sslrootcert)', () => {
    const ca = join(makeTempDir(), 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nnot-a-real-one\n-----END CERTIFICATE-----\n');
    const config = clientConfig(settings(`postgres://hookrelay@db.internal:5432/hookrelay?sslmode=verify-full&sslrootcert=${ca}`));
    expect(config.ssl).toMatchObject({ ca: expect.stringContaining('not-a-real-one') });
    expect(clientConfig(settings('postgres://hookrelay@db/hookrelay?sslmode=disable')).ssl).toBe(false);
    expect(clientConfig(settings('postgres://hookrelay@db/hookrelay')).ssl).toBeFalsy();
  });

  it('takes the password from the URL, else from the settings (PGPASSWORD)', () => {
    expect(clientConfig(settings('postgres://u:in%20url@db/x', 'env')).password).toBe('in url');
    expect(clientConfig(settings('postgres://u@db/x', 'env')).password).toBe('env');
  });

  it('asks every connection for synchronous commits and the configured timeouts, after the URL\'s own options', () => {
    const config = clientConfig(settings('postgres://u@db/x?options=-c%20search_path%3Dtenant'));
    expect(config).toMatchObject({ statement_timeout: 1_000, lock_timeout: 500, connectionTimeoutMillis: 300, application_name: 'hookrelay' });
    expect(config.options).toBe('-c search_path=tenant -c synchronous_commit=on -c jit=off');
  });

  it('gives every query a client-side deadline past the server-side one, and probes idle connections with TCP keepalive', () => {
    const config = clientConfig(settings('postgres://u@db/x')) as ReturnType<typeof clientConfig> & { query_timeout?: number };
    expect(config.query_timeout).toBe(1_000 + 5_000);
    expect(config).toMatchObject({ keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
  });

  it('never shows a password in what it logs', () => {
    expect(redactUrl('postgres://hookrelay:s3cr%40t@db:5432/hookrelay?sslmode=require')).toBe('postgres://hookrelay:***@db:5432/hookrelay?sslmode=require');
    expect(redactUrl('postgresql://u@db/x?password=s3cret&sslmode=require')).toBe('postgresql://u@db/x?password=***&sslmode=require');
    expect(redactUrl('postgres://u@db/x')).toBe('postgres://u@db/x');
  });

  it('refuses a URL it cannot read, without echoing its password', () => {
    const refused = (() => {
      try {
        clientConfig(settings('postgres://u:secret@db:notaport/x'));
      } catch (err) {
        return err as Error & { code: string };
      }
      throw new Error('expected the URL to be refused');
    })();
    expect(refused).toMatchObject({ code: 'invalid_config', message: expect.stringContaining('database.url: not a PostgreSQL URL (postgres://u:***@db:notaport/x)') });
    expect(refused.message).not.toContain('secret');
  });
});
