import { describe, expect, it } from 'vitest';
import { perTestClock, storeOpener, type StoreFactory } from './contract-helpers.js';

export function consoleSessionStoreContract(factory: StoreFactory): void {
  const clock = perTestClock();
  const open = storeOpener(factory, clock);

  describe('ConsoleSessionStore: console sessions shared by every node', () => {
    it('finds a session until it expires or is deleted', async () => {
      const store = await open();
      const now = Date.now();
      clock.set(now);
      await store.saveConsoleSession({ idHash: 'h1', csrf: 'c1', expiresAt: now + 60_000 }, 10);
      clock.set(now);
      await store.saveConsoleSession({ idHash: 'h2', csrf: 'c2', expiresAt: now + 60_000 }, 10);
      clock.set(now);
      expect(await store.getConsoleSession('h1')).toEqual({ idHash: 'h1', csrf: 'c1', expiresAt: now + 60_000 });
      clock.set(now + 60_000);
      expect(await store.getConsoleSession('h1')).toBeNull();
      clock.set(now);
      expect(await store.getConsoleSession('nope')).toBeNull();
      await store.deleteConsoleSession('h1');
      await store.deleteConsoleSession('h1');
      clock.set(now);
      expect(await store.getConsoleSession('h1')).toBeNull();
      clock.set(now);
      expect(await store.getConsoleSession('h2')).toMatchObject({ csrf: 'c2' });
    });

    it('drops expired sessions and, beyond the number to keep, the oldest, when one starts', async () => {
      const store = await open();
      const now = Date.now();
      clock.set(now);
      await store.saveConsoleSession({ idHash: 'expired', csrf: 'c', expiresAt: now + 1_000 }, 3);
      clock.set(now + 2_000);
      for (let i = 1; i <= 4; i++) await store.saveConsoleSession({ idHash: `s${i}`, csrf: 'c', expiresAt: now + 10_000 + i }, 3);
      clock.set(now);
      const live = await Promise.all(['expired', 's1', 's2', 's3', 's4'].map(async (h) => (await store.getConsoleSession(h)) !== null));
      expect(live).toEqual([false, false, true, true, true]);
    });
  });
}
