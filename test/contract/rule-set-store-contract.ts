import { describe, expect, it } from 'vitest';
import { event, forward, perTestClock, storeOpener, type StoreFactory } from './contract-helpers.js';

export function ruleSetStoreContract(factory: StoreFactory): void {
  const clock = perTestClock();
  const open = storeOpener(factory, clock);

  describe('RuleSetStore: rule sets kept by hash', () => {
    it('keeps a rule set once: saving the same hash again keeps the first one', async () => {
      const store = await open();
      expect(await store.getRuleSet('abc')).toBeNull();
      const rules = [{ id: 'r', file: 'rules/r.yaml', line: 1, definition: { id: 'r', to: { url: '${HOOK_URL}' } } }];
      await store.saveRuleSet({ hash: 'abc', kind: 'loaded', rules, firstLoadedAt: 1_000 });
      await Promise.all([store.saveRuleSet({ hash: 'abc', kind: 'one-off', rules: [], firstLoadedAt: 2_000 }), store.saveRuleSet({ hash: 'abc', kind: 'loaded', rules: [], firstLoadedAt: 3_000 })]);
      expect(await store.getRuleSet('abc')).toEqual({ hash: 'abc', kind: 'loaded', rules, firstLoadedAt: 1_000 });
      await store.saveRuleSet({ hash: 'one', kind: 'one-off', rules: [], firstLoadedAt: 4_000 });
      expect(await store.getRuleSet('one')).toEqual({ hash: 'one', kind: 'one-off', rules: [], firstLoadedAt: 4_000 });
    });

    it('records the rule set that routed an event, in the event, its bodies and its claimed deliveries', async () => {
      const store = await open();
      const routed = await store.saveEvent(event('t-routed', { ruleSetHash: 'set-a', deliveries: [forward('fwd', { ruleSetHash: 'set-a' })] }));
      const before = await store.saveEvent(event('t-before'));
      expect(await store.getEvent(routed.id)).toMatchObject({ ruleSetHash: 'set-a', edit: null });
      expect(await store.getEvent(before.id)).toMatchObject({ ruleSetHash: null, edit: null });
      expect((await store.listEventBodies({}, 10)).map((e) => [e.id, e.ruleSetHash])).toEqual([[routed.id, 'set-a'], [before.id, null]]);
      clock.set(Date.now() + 1_000);
      const claimed = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(claimed.map((d) => [d.eventId, d.ruleSetHash])).toEqual([[routed.id, 'set-a']]);
    });
  });
}
