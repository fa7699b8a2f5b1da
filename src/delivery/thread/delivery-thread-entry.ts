// The delivery thread: the worker, its destinations' limits and circuits and the outage tracker, on a
// connection of their own, so that claims, sends and attempt records never hold up the receiver's event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { ruleSetFromMessage } from '../../rules/rule-set-message.js';
import { configureTransformSandbox } from '../../rules/transform-sandbox.js';
import type { RuleSet } from '../../rules/types.js';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/store.js';
import { createDeliverySide, type DeliverySide } from '../delivery-side.js';
import { setThreadNice } from './thread-priority.js';
import { createThreadLogger } from './thread-log.js';
import type { AttemptNote, DeliveryThreadData, FromDeliveryThread, ToDeliveryThread } from './messages.js';

const port = parentPort!;
const data = workerData as DeliveryThreadData;
const send = (message: FromDeliveryThread): void => port.postMessage(message);
// Log calls go to the receiver, which writes them to its own log (its format, its destination).
const logger = createThreadLogger(data.logLevel, (entry) => send({ type: 'log', entry }));

let store: Store | null = null;
let ruleSet: RuleSet | null = null;
let side: DeliverySide | null = null;

async function start(): Promise<void> {
  setThreadNice(data.config.delivery.threadNice, logger);
  configureTransformSandbox(data.config.rules.transform);
  // On PostgreSQL a pool of its own, half the receiver's: claims and attempt records are batched, so a few
  // connections carry them.
  const database = { ...data.config.database, poolSize: Math.max(2, Math.ceil(data.config.database.poolSize / 2)) };
  // The receiver reads, validates, keeps and reports the rule files; the thread builds the rules it is given.
  ruleSet = ruleSetFromMessage(data.rules, data.env);
  store = await openStore({ ...data.config, database }, logger, { attached: true });
  let attempts: AttemptNote[] = [];
  side = createDeliverySide({
    config: data.config,
    store,
    rules: () => ruleSet!,
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
  await store?.close();
  send({ type: 'stopped' });
  port.close();
}

/** A set that does not build here (it built in the receiver with the same environment) leaves the last one in use. */
function useRules(message: Extract<ToDeliveryThread, { type: 'rules' }>): void {
  try {
    ruleSet = ruleSetFromMessage(message.rules, data.env);
  } catch (err) {
    logger.error({ err, hash: message.rules.hash, keptHash: ruleSet?.hash }, 'the delivery thread could not build the reloaded rules; keeping the last ones');
  }
}

port.on('message', (message: ToDeliveryThread) => {
  if (message.type === 'wake') side?.wake();
  else if (message.type === 'rules') useRules(message);
  else if (message.type === 'destinations') send({ type: 'destinations', id: message.id, view: side!.destinations() });
  else if (message.type === 'stop') void stop(message.graceMs);
});

start().then(
  () => send({ type: 'ready' }),
  async (err: unknown) => {
    await store?.close().catch(() => undefined);
    const code = (err as { code?: unknown }).code;
    send({ type: 'failed', message: (err as Error).message, ...(typeof code === 'string' && { code }) });
    port.close();
  },
);
