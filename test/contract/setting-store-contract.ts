import { describe, expect, it } from 'vitest';
import { storeOpener, type StoreFactory } from './contract-helpers.js';

export function settingStoreContract(factory: StoreFactory): void {
  const open = storeOpener(factory);

  describe('SettingStore: settings shared by every node', () => {
    it('keeps the first value claimed under a name; concurrent claims all get that one value', async () => {
      const store = await open();
      expect(await store.getSetting('admin_token')).toBeNull();
      const claims = await Promise.all(['a', 'b', 'c', 'd'].map((value) => store.claimSetting('admin_token', value)));
      expect(new Set(claims).size).toBe(1);
      expect(['a', 'b', 'c', 'd']).toContain(claims[0]);
      expect(await store.claimSetting('admin_token', 'later')).toBe(claims[0]);
      expect(await store.getSetting('admin_token')).toBe(claims[0]);
      expect(await store.claimSetting('source_secret/checkout', 'other')).toBe('other');
    });

  });
}
