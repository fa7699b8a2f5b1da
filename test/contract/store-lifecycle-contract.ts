import { describe, expect, it } from 'vitest';
import { HookrelayError } from '../../src/errors.js';
import { event, type StoreFactory } from './contract-helpers.js';

export function storeLifecycleContract(factory: StoreFactory): void {
  describe('StoreLifecycle', () => {
    it('says it can write while open, and answers store_unavailable once closed', async () => {
      const store = await factory.open();
      await expect(store.checkWritable()).resolves.toBeUndefined();
      await store.close();
      const refused = await store.saveEvent(event('late')).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(HookrelayError);
      expect(refused).toMatchObject({ code: 'store_unavailable', status: 503 });
      await expect(store.checkWritable()).rejects.toMatchObject({ code: 'store_unavailable' });
    });
  });
}
