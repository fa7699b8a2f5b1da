import { Worker } from 'node:worker_threads';
import { TRANSFORM_DEFAULTS } from '../transform-defaults.js';
import { TransformError } from './transform-error.js';
import { timeLimitMessage, type EvaluationLimits } from './transform-evaluate.js';
import type { FromTransformThread, ToTransformThread, TransformAnswer } from './transform-messages.js';
import type { RenderedBody, RuleEventInput } from './types.js';

/** How transforms are bounded (`rules.transform` in the configuration). */
export interface SandboxLimits extends EvaluationLimits {
  /** Heap of each sandbox thread (V8's old generation), in MiB. */
  maxMemoryMb: number;
  /** Threads that evaluate transforms at once, per thread that renders (the receiver's, the delivery thread). */
  workers: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = TRANSFORM_DEFAULTS;

/**
 * jsonata checks its own time limit between evaluation steps and answers with an error; a thread still
 * busy this long after the limit is inside one step (a built-in that does not return) and is ended.
 */
const HARD_DEADLINE_GRACE_MS = 100;

interface Task {
  message: ToTransformThread;
  resolve(rendered: RenderedBody): void;
  reject(err: TransformError): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  task: Task | null;
  timer: NodeJS.Timeout | null;
  /** The error the thread reported before it exited (out of memory, a crash). */
  failure: Error | null;
}

/**
 * The sandbox thread's code: its compiled sibling. Run from the TypeScript sources (the test runner), the
 * build's, which `npm test` makes first.
 */
function entryUrl(): URL {
  const fromSources = import.meta.url.endsWith('.ts');
  return new URL(fromSources ? '../../dist/rules/transform-thread.js' : './transform-thread.js', import.meta.url);
}

/**
 * A small pool of threads that evaluate JSONata transforms, so that no transform runs on a thread that
 * answers webhooks or sends deliveries. A transform that outlives its time limit, whatever it is doing, is
 * ended with its thread, which is replaced; one that outgrows its heap ends its thread the same way; its
 * output is capped. Threads start on the first render and do not keep the process alive while idle.
 */
export class TransformSandbox {
  private readonly slots: (Slot | null)[];
  private readonly queue: Task[] = [];
  /** Threads busy with each expression: one expression never takes them all (see `pump`). */
  private readonly running = new Map<string, number>();
  private nextId = 1;
  private closed = false;
  private started = 0;

  constructor(
    readonly limits: Readonly<SandboxLimits> = DEFAULT_SANDBOX_LIMITS,
    private readonly entry: URL = entryUrl(),
  ) {
    this.slots = Array.from({ length: Math.max(1, limits.workers) }, () => null);
  }

  /** Threads started so far (a thread ended on a deadline is replaced by a new one). */
  get threadsStarted(): number {
    return this.started;
  }

  /** Renders `expression` over `input` as a JSON body; rejects with a TransformError carrying the reason. */
  render(expression: string, input: RuleEventInput): Promise<RenderedBody> {
    if (this.closed) return Promise.reject(new TransformError('transform_crashed', 'the transform sandbox is closed'));
    return new Promise<RenderedBody>((resolve, reject) => {
      const message: ToTransformThread = { id: this.nextId++, expression, body: input.body, event: input.event, source: input.source };
      this.queue.push({ message, resolve, reject });
      this.pump();
    });
  }

  /** Ends every thread; renders waiting or running are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const refused = new TransformError('transform_crashed', 'the transform sandbox is closed');
    for (const task of this.queue.splice(0)) task.reject(refused);
    await Promise.all(this.slots.map(async (slot, index) => {
      if (!slot) return;
      this.slots[index] = null;
      this.finish(slot)?.reject(refused);
      await slot.worker.terminate();
    }));
  }

  /**
   * Gives waiting renders to idle threads, oldest first, except that one expression runs on at most all
   * threads but one: a rule whose transforms all run to their time limit leaves a thread to the others.
   */
  private pump(): void {
    const perExpression = Math.max(1, this.slots.length - 1);
    for (let index = 0; index < this.slots.length && this.queue.length > 0; index++) {
      const slot = this.slots[index];
      if (slot === null) this.spawn(index);
      else if (slot.ready && slot.task === null) {
        const next = this.queue.findIndex((task) => (this.running.get(task.message.expression) ?? 0) < perExpression);
        if (next >= 0) this.assign(slot, index, this.queue.splice(next, 1)[0]!);
      }
    }
  }

  private finish(slot: Slot): Task | null {
    const task = slot.task;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.task = null;
    if (task) {
      const { expression } = task.message;
      const left = (this.running.get(expression) ?? 1) - 1;
      if (left > 0) this.running.set(expression, left);
      else this.running.delete(expression);
    }
    return task;
  }

  private spawn(index: number): void {
    const worker = new Worker(this.entry, {
      name: 'hookrelay-transform',
      workerData: { timeoutMs: this.limits.timeoutMs, maxOutputBytes: this.limits.maxOutputBytes } satisfies EvaluationLimits,
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxMemoryMb },
    });
    this.started += 1;
    const slot: Slot = { worker, ready: false, task: null, timer: null, failure: null };
    this.slots[index] = slot;
    worker.on('message', (message: FromTransformThread) => {
      if (this.slots[index] !== slot) return;
      if ('ready' in message) {
        slot.ready = true;
        worker.unref();
        this.pump();
        return;
      }
      this.settle(slot, message);
    });
    worker.on('error', (err) => {
      slot.failure = err;
    });
    worker.on('exit', () => this.exited(slot, index));
  }

  private assign(slot: Slot, index: number, task: Task): void {
    slot.task = task;
    this.running.set(task.message.expression, (this.running.get(task.message.expression) ?? 0) + 1);
    // A render in progress keeps the process alive (a CLI dry run waits for it); an idle thread does not.
    slot.worker.ref();
    slot.timer = setTimeout(() => {
      // Past the limit and jsonata has not stopped it: one step that does not return. End the thread.
      if (this.slots[index] !== slot) return;
      this.slots[index] = null;
      this.finish(slot);
      task.reject(new TransformError('transform_timeout', timeLimitMessage(this.limits.timeoutMs)));
      void slot.worker.terminate();
      this.pump();
    }, this.limits.timeoutMs + HARD_DEADLINE_GRACE_MS);
    try {
      slot.worker.postMessage(task.message);
    } catch (err) {
      this.settle(slot, { id: task.message.id, ok: false, code: 'transform_crashed', message: `the event cannot be given to the transform: ${(err as Error).message}` });
    }
  }

  private settle(slot: Slot, answer: TransformAnswer): void {
    if (slot.task === null || slot.task.message.id !== answer.id) return;
    const task = this.finish(slot)!;
    slot.worker.unref();
    if (answer.ok) task.resolve({ body: Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength), contentType: answer.contentType });
    else task.reject(new TransformError(answer.code, answer.message));
    this.pump();
  }

  /** A thread ended by itself (out of memory, a crash): its render fails with the reason, and it is replaced. */
  private exited(slot: Slot, index: number): void {
    if (this.slots[index] !== slot) return;
    this.slots[index] = null;
    const reason = this.exitReason(slot.failure);
    const task = this.finish(slot);
    if (task) task.reject(reason);
    else if (!slot.ready) {
      // It never started: renders waiting now would only start it again.
      for (const waiting of this.queue.splice(0)) waiting.reject(reason);
    }
    if (!this.closed) this.pump();
  }

  private exitReason(failure: Error | null): TransformError {
    if ((failure as NodeJS.ErrnoException | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return new TransformError('transform_out_of_memory', `transform exceeded its memory limit of ${this.limits.maxMemoryMb} MiB`);
    }
    return new TransformError('transform_crashed', `the transform sandbox stopped${failure ? `: ${failure.message}` : ''}`);
  }
}

let configured: Readonly<SandboxLimits> = DEFAULT_SANDBOX_LIMITS;
let shared: TransformSandbox | null = null;

/** Sets the limits of this thread's sandbox (at start, from the configuration); a running one is replaced. */
export function configureTransformSandbox(limits: Partial<SandboxLimits>): void {
  const next = { ...DEFAULT_SANDBOX_LIMITS, ...limits };
  // Several receivers in one process (the tests) share it: the same limits keep the running one.
  if (JSON.stringify(next) === JSON.stringify(configured)) return;
  configured = Object.freeze(next);
  const previous = shared;
  shared = null;
  void previous?.close();
}

/** This thread's sandbox, which every rule's transform renders in. */
export function transformSandbox(): TransformSandbox {
  return (shared ??= new TransformSandbox(configured));
}
