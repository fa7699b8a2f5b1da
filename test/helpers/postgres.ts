import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, it } from 'vitest';

/** The server tests use (trust auth); each test creates and drops databases of its own on it. */
export const TEST_DATABASE_URL = process.env.HOOKRELAY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/**
 * Settings of a small test node: few connections, for the server is shared. Tests seed thousands of events
 * through saveEvent at once on a busy machine: the commit deadline is generous here, and the tests of the
 * deadline itself set their own.
 */
export const TEST_POOL = { poolSize: 3, statementTimeoutMs: 10_000, lockTimeoutMs: 2_000, connectTimeoutMs: 3_000, commitTimeoutMs: 30_000, notifications: true };
/** CI lists the backends that must be there: a missing PostgreSQL then fails instead of skipping. */
const REQUIRED = (process.env.HOOKRELAY_TEST_REQUIRE ?? '').split(/[\s,]+/).includes('postgres');

function serverLabel(): string {
  const url = new URL(TEST_DATABASE_URL);
  return `${url.hostname}:${url.port || '5432'}`;
}

async function withAdminClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 3_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

let availability: Promise<boolean> | undefined;

/** Whether the test server answers (asked once per test file). */
export function postgresAvailable(): Promise<boolean> {
  return (availability ??= withAdminClient(async (client) => (await client.query('SELECT 1')).rowCount === 1).catch(() => false));
}

export interface TestDatabase {
  name: string;
  url: string;
  /** Ends every connection to this database (as a failover or an operator would), never the server. */
  terminateConnections(): Promise<number>;
  /**
   * The URL of a new, empty schema in this database (its search_path): a fresh store per test without a
   * database per test (each DROP DATABASE costs the shared server a checkpoint).
   */
  freshSchemaUrl(): Promise<string>;
  /** One query on a connection of the test's own (never the store's), e.g. to count stored rows. */
  query<Row extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<Row[]>;
  drop(): Promise<void>;
}

/** CREATE DATABASE hookrelay_test_<random> on the test server; `drop()` removes it, whoever is still connected. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `hookrelay_test_${randomBytes(6).toString('hex')}`;
  await withAdminClient((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  let schemas = 0;
  const database: TestDatabase = {
    name,
    url: url.toString(),
    freshSchemaUrl: async () => {
      schemas += 1;
      const schema = `s${schemas}`;
      await database.query(`CREATE SCHEMA ${schema}`);
      const schemaUrl = new URL(url);
      schemaUrl.searchParams.set('options', `-c search_path=${schema}`);
      return schemaUrl.toString();
    },
    terminateConnections: () =>
      withAdminClient(async (client) => {
        const { rows } = await client.query<{ ended: boolean }>(
          'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        return rows.filter((r) => r.ended).length;
      }),
    query: async <Row extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
      const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 3_000 });
      client.on('error', () => {});
      await client.connect();
      try {
        return (await client.query<Row>(text, values)).rows;
      } finally {
        await client.end().catch(() => {});
      }
    },
    drop: () => withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
  return database;
}

const available = await postgresAvailable();

/**
 * A describe block that needs the test server. Where none answers it is skipped, and its title says why in
 * the summary; with HOOKRELAY_TEST_REQUIRE=postgres (CI) it fails instead.
 */
export function describeWithPostgres(title: string, body: () => void): void {
  if (available) {
    describe(title, body);
  } else if (REQUIRED) {
    describe(title, () => {
      it('needs PostgreSQL', () => {
        throw new Error(`no PostgreSQL at ${serverLabel()} (HOOKRELAY_TEST_DATABASE_URL), and HOOKRELAY_TEST_REQUIRE names postgres`);
      });
    });
  } else {
    console.warn(`PostgreSQL tests skipped: no PostgreSQL at ${serverLabel()} (HOOKRELAY_TEST_DATABASE_URL; HOOKRELAY_TEST_REQUIRE=postgres makes this a failure)`);
    describe.skip(`${title} (skipped: no PostgreSQL at ${serverLabel()})`, body);
  }
}
