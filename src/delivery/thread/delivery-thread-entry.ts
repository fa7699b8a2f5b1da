// The delivery thread: the worker, its destinations' limits and circuits and the outage tracker, on a
// connection of their own, so that claims, sends and attempt records never hold up the receiver's event loop.
import { parentPort, workerData } from 'node:worker_threads';
import type { Level } from 'pino';
import { createLogger } from '../../log.js';
import { RuleSetWatcher } from '../../rules/watcher.js';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/store.js';
import { createDeliverySide, type DeliverySide } from '../delivery-side.js';
import { setThreadNice } from './thread-priority.js';
import type { AttemptNote, DeliveryThreadData, FromDeliveryThread, ToDeliveryThread } from './messages.js';

const port = parentPort!;
const data = workerData as DeliveryThreadData;
const send = (message: FromDeliveryThread): void => port.postMessage(message);
// Lines go to the receiver, which writes them to its own log (its format, its destination).
const logger = createLogger(data.logLevel as Level, { write: (line: string) => send({ type: 'log', line }) });

let store: Store | null = null;
let rules: RuleSetWatcher | null = null;
let side: DeliverySide | null = null;

async function start(): Promise<void> {
  setThreadNice(data.config.delivery.threadNice, logger);
  // On PostgreSQL a pool of its own, half the receiver's: claims and attempt records are batched, so a few
  // connections carry them.
  const database = { ...data.config.database, poolSize: Math.max(2, Math.ceil(data.config.database.poolSize / 2)) };
  store = await openStore({ ...data.config, database }, logger, { attached: true });
  // The receiver loads, keeps and reports the same files; this copy only tells the worker today's rules.
  rules = await RuleSetWatcher.start({ dir: data.config.rulesDir, env: data.env, logger: createLogger('silent') });
  const current = rules;
  let attempts: AttemptNote[] = [];
  side = createDeliverySide({
    config: data.config,
    store,
    rules: () => current.current(),
    env: data.env,
    logger,
    // Gathered over one turn of the loop: one message for a burst of attempts, not one each.
    onAttempt: (attempt) => {
      if (attempts.push(attempt) > 1) return;
      setImmediate(() => {
        send({ type: 'attempts', attempts, active: side!.activeAttempts });
        attempts = [];
      });
    },
    onOutageOpened: (outage) => send({ type: 'outage', change: 'opened', outage }),
    onOutageClosed: (outage) => send({ type: 'outage', change: 'closed', outage }),
  });
  await side.start();
}

async function stop(graceMs: number): Promise<void> {
  await side?.stop(graceMs);
  rules?.close();
  await store?.close();
  send({ type: 'stopped' });
  port.close();
}

port.on('message', (message: ToDeliveryThread) => {
  if (message.type === 'wake') side?.wake();
  else if (message.type === 'destinations') send({ type: 'destinations', id: message.id, view: side!.destinations() });
  else if (message.type === 'stop') void stop(message.graceMs);
});

start().then(
  () => send({ type: 'ready' }),
  async (err: unknown) => {
    rules?.close();
    await store?.close().catch(() => undefined);
    send({ type: 'failed', message: (err as Error).message });
    port.close();
  },
);
