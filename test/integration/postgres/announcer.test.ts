import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { clientConfig } from '../../../src/store/postgres/connection.js';
import { Announcer } from '../../../src/store/postgres/notifications.js';
import { eventually } from '../../helpers/rules.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';

let database: TestDatabase;
let pool: pg.Pool;
let listener: pg.Client;
const heard: number[] = [];

describeWithPostgres('announcing commits to the other nodes', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool(clientConfig({ url: database.url, ...TEST_POOL }));
    listener = new pg.Client(clientConfig({ url: database.url, ...TEST_POOL }));
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.channel === 'announcer_test') heard.push(performance.now());
    });
    await listener.query('LISTEN announcer_test');
  });
  afterAll(async () => {
    await listener?.end();
    await pool?.end();
    await database?.drop();
  });

  it('sends at most one NOTIFY per gap however often it is asked, and one after the last request', async () => {
    const gapMs = 50;
    const announcer = new Announcer(pool, 'announcer_test', 'node-a', gapMs);

    // A quiet spell: the announcement goes out without waiting for a gap.
    announcer.announce();
    await eventually(() => heard.length === 1, 5_000, 'the first notification');

    // A burst: asked every millisecond or so (as often as commits come under load) for 300 ms.
    await new Promise((resolve) => setTimeout(resolve, gapMs * 2));
    heard.length = 0;
    let asked = 0;
    const started = performance.now();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        announcer.announce();
        asked += 1;
        if (performance.now() - started >= 300) {
          clearInterval(timer);
          resolve();
        }
      }, 1);
    });
    const lastAsked = performance.now();
    await new Promise((resolve) => setTimeout(resolve, gapMs * 4));

    const elapsed = lastAsked - started;
    expect(asked).toBeGreaterThan(20);
    // One per gap at most (plus the one at the start of the burst): never one per announce.
    expect(heard.length).toBeLessThanOrEqual(Math.ceil(elapsed / gapMs) + 2);
    // Nothing asked for is dropped: a notification follows the last request of the burst.
    expect(heard.at(-1)!).toBeGreaterThan(lastAsked);
  });
});
