import { afterAll, afterEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, fixtureOn } from '../admin/admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

/** An envelope whose `result.deep` holds `levels` more levels: the whole body nests `levels + 2` deep. */
const deepBody = (levels: number, id = 'deep-1'): Buffer =>
  Buffer.from(`{"event":"x:deep","result":{"id":"${id}","deep":${'['.repeat(levels)}${']'.repeat(levels)}}}`);

describeEachBackend('nesting limit', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('refuses a body nested 5,000 deep with 422 too_deeply_nested, storing nothing; 64 levels pass', async () => {
    const { app } = await startAdminFixture();
    const deep = await postSigned(app.webhookUrl(), deepBody(5_000), TEST_SECRET);
    expect([deep.status, deep.json.error.code, deep.json.error.details]).toEqual([422, 'too_deeply_nested', { maxDepth: 64 }]);
    const over = await postSigned(app.webhookUrl(), deepBody(63), TEST_SECRET);
    expect(over.json.error.code).toBe('too_deeply_nested');
    expect(await app.store.countEvents({})).toBe(0);
    const atLimit = await postSigned(app.webhookUrl(), deepBody(62), TEST_SECRET);
    expect(atLimit.status).toBe(200);
  });

  it('takes the limit from maxDepth', async () => {
    const { app } = await startAdminFixture({ overrides: { maxDepth: 3 } });
    expect((await postSigned(app.webhookUrl(), deepBody(1), TEST_SECRET)).status).toBe(200);
    expect((await postSigned(app.webhookUrl(), deepBody(2, 'deep-2'), TEST_SECRET)).json.error).toMatchObject({ code: 'too_deeply_nested', details: { maxDepth: 3 } });
  });

  it('shows and edits an event stored deep before the limit (no 500), and refuses an edited body nested too deep', async () => {
    const { api, app, ingest } = await startAdminFixture();
    // As an event stored by a version without the limit would be.
    const { id } = await app.store.saveEvent({
      source: 'checkout', event: 'x:deep', transferId: 'old', checkoutId: null, email: null, walletAddress: null, validation: 'unrecognised',
      receivedAt: Date.now(), headers: {}, body: deepBody(5_000, 'old'),
    });
    const shown = await api(`/events/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.json.event).toMatchObject({ id, parsed: null, body: deepBody(5_000, 'old').toString() });
    const edited = await api(`/events/${id}/edited-replay`, { method: 'POST', body: { body: '{"event":"x:deep","result":{"id":"old"}}', dryRun: true } });
    expect(edited.status).toBe(200);

    const fresh = await ingest();
    const tooDeep = await api(`/events/${fresh}/edited-replay`, { method: 'POST', body: { body: deepBody(5_000).toString() } });
    expect([tooDeep.status, tooDeep.json.error.code]).toEqual([422, 'too_deeply_nested']);
    expect(await app.store.countEvents({})).toBe(2);
  });
});
