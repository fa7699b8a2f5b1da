import { afterAll, expect, it } from 'vitest';
import { ruleInputOf } from '../../../src/operations/event-input.js';
import { ReplayRouter } from '../../../src/operations/replay-routing.js';
import { planRoutedReplay } from '../../../src/operations/routed-replay.js';
import { keptRuleOf } from '../../../src/rules/kept-rules.js';
import { ruleSchema } from '../../../src/rules/schema.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

const OLD_HASH = 'b4ckref0old1';

/** Rule `fwd` as an older hookrelay kept it: JavaScript regexes with a backreference, in its filter and its transform. */
function olderVersion(sinkUrl: string) {
  const definition = ruleSchema.parse({
    id: 'fwd',
    on: ['x:regex'],
    where: { 'result.s': { $regex: '^(a)\\1$' } },
    transform: '{ "id": result.id, "twice": $contains(result.s, /(a)\\1/) }',
    to: { url: sinkUrl, headers: { 'X-Version': 'old' } },
  });
  return keptRuleOf(definition, { file: 'rules/regex.yaml', line: 1 });
}

describeEachBackend('a kept rule version with a regex the engine cannot run', (backend) => {
  it('still sends its pending deliveries after a restart, and replay through it says why it is not evaluated', async () => {
    const sink = await startWebhookSink();
    const storage = { ...(await backend.storage()), dataDir: makeTempDir() };
    // Today's rule `fwd` has no such regex (a file with one would be refused) and does not match the event.
    const rulesDir = rulesDirWith({ 'regex.yaml': `id: fwd\non: ["x:regex"]\nwhere:\n  result.s: { $regex: "^b" }\nto:\n  url: ${sink.url}\n  headers: { X-Version: today }\n` });
    const config = { ...storage, rulesDir, delivery: { ...TEST_DELIVERY, thread: true } };

    const first = await startTestReceiver({ ...config, delivery: { ...config.delivery, enabled: false } });
    let eventId: number;
    try {
      eventId = (await postSigned(first.webhookUrl(), { event: 'x:regex', result: { id: 'k-1', s: 'aa' } }, TEST_SECRET)).json.id;
      // What the older version stored: its rule set by hash, and the delivery it planned (filtered and rendered then).
      await first.store.saveRuleSet({ hash: OLD_HASH, kind: 'loaded', rules: [olderVersion(sink.url)], firstLoadedAt: Date.now() - 60_000 });
      const rendered = Buffer.from(JSON.stringify({ id: 'k-1', twice: true }));
      await first.store.createDeliveries(eventId, [{ ruleId: 'fwd', ruleSetHash: OLD_HASH, body: rendered, contentType: 'application/json', delayMs: 0 }], 'ingest');
    } finally {
      await first.close();
    }

    const restarted = await startTestReceiver(config);
    try {
      const [sent] = await sink.waitFor(1, 10_000);
      expect(sent!.headers['x-version']).toBe('old');
      expect(JSON.parse(sent!.rawBody.toString())).toEqual({ id: 'k-1', twice: true });
      const delivery = await eventually(async () => {
        const [d] = (await restarted.store.listDeliveries({ eventId }, { limit: 1 })).items;
        return d?.state === 'delivered' ? d : null;
      }, 5000, 'the delivery to be recorded as delivered');
      expect(delivery).toMatchObject({ ruleSetHash: OLD_HASH, deadReason: null });

      // Replaying through that version would have to run the regex: the rule is withheld, with the reason.
      const event = (await restarted.store.getEvent(eventId))!;
      const router = new ReplayRouter(restarted.store, {}, () => restarted.rules.current());
      const routing = await router.routingFor({ ...event, ruleSetHash: OLD_HASH }, 'original');
      const plan = await planRoutedReplay(routing, ruleInputOf(event), {});
      expect(plan.deliveries).toEqual([]);
      expect(plan.withheld).toEqual([
        { ruleId: 'fwd', reason: expect.stringMatching(/^rule "fwd" of this version cannot be evaluated: \$regex "\^\(a\)\\\\1\$" cannot run in linear time: a backreference \(\\1\) .*; regular expression \/\(a\)\\1\/ cannot run in linear time/) },
      ]);
    } finally {
      await restarted.close();
      await sink.close();
    }
  });
});
