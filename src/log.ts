import { pino, type Logger, type DestinationStream, type Level } from 'pino';
import type { Config } from './config.js';
import { SERVICE_SIGNATURE_HEADER } from './signing/scheme.js';

export type { Logger };

/**
 * Header and field paths that may carry secrets or signatures: never written to a log line. Every path names
 * its top-level key: pino then redacts only lines that have one of these keys. A path starting with a
 * wildcard (`*.secret`) would send every value of every line (each ingest request, each delivery attempt)
 * through the redactor, which parses its paths and clones on each call: that would be 40 % of all memory
 * the delivery loop allocates.
 */
const REDACTED_HEADERS = ['authorization', 'cookie', SERVICE_SIGNATURE_HEADER.toLowerCase(), 'webhook-signature'];

export const REDACT_PATHS = [
  ...REDACTED_HEADERS.flatMap((name) => [`req.headers["${name}"]`, `headers["${name}"]`]),
  'secret',
  'secrets',
  'token',
];

export type LogFormat = 'json' | 'pretty';

/** The configured format, else readable lines for a person at a terminal and JSON for everything else. */
export function chooseLogFormat(configured: LogFormat | undefined, isTTY: boolean): LogFormat {
  return configured ?? (isTTY ? 'pretty' : 'json');
}

/**
 * Where the server's log lines go: JSON to stdout, or readable lines through pino-pretty, loaded only
 * when asked for (a server under a process manager never pays for it).
 */
export async function createLogDestination(format: LogFormat, output: NodeJS.WritableStream | 1 = 1): Promise<DestinationStream> {
  if (format === 'json') {
    if (output !== 1) return output as DestinationStream;
    // At exit the lines still waiting are written synchronously: an asynchronous write would never finish.
    return new BatchedDestination(stdoutBytes(false), { writeSync: (lines) => void stdoutBytes(true).write(lines) });
  }
  const { default: pretty } = await import('pino-pretty');
  // Synchronous writes: the last lines before exit reach the terminal.
  return pretty({ destination: output, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', singleLine: true });
}

/** Whether a request answered with `status` gets its log line under `logRequests`. */
export function logsRequest(logRequests: Config['logRequests'], status: number): boolean {
  return logRequests === 'all' || status >= 400;
}

/** Stdout through sonic-boom in its `buffer` content mode (which its types do not describe: they take strings). */
function stdoutBytes(sync: boolean): BatchOutput {
  return pino.destination({ dest: 1, sync, contentMode: 'buffer' }) as unknown as BatchOutput;
}

/** pino's `isoTime`, formatted once per millisecond: under load many lines share one (every request logs one). */
export function isoTimeOncePerMs(clock: () => number = Date.now): () => string {
  let ms = Number.NaN;
  let field = '';
  return () => {
    const now = clock();
    if (now !== ms) {
      ms = now;
      field = `,"time":"${new Date(now).toISOString()}"`;
    }
    return field;
  };
}

/** Where a batch goes: a stream taking bytes (sonic-boom's `buffer` content mode). */
export interface BatchOutput {
  write(lines: Buffer): unknown;
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
}

/** How long a log line may wait for the lines after it before they are written together. */
export const LOG_BATCH_MS = 20;
/** How much may wait: a batch this long (in bytes) is written at once. */
export const LOG_BATCH_BYTES = 64 * 1024;

/**
 * Hands the lines logged within `maxDelayMs` of the first unwritten one to `out` as one write. Under load
 * nearly every request logs a line, often one per turn of the event loop: a write per turn would cost each
 * request a file system request on libuv's thread pool, a thread wake-up and a completion callback, about a
 * tenth of its CPU. A line waits at most `maxDelayMs`; a process that exits writes what waits.
 *
 * Waiting lines are kept as UTF-8 bytes outside the JavaScript heap, not as strings: a line waits longer
 * than the young generation lasts under load (a scavenge every 10 ms or so), and every line kept as a
 * string would be copied by each scavenge it met.
 */
export class BatchedDestination implements DestinationStream {
  private readonly pending: Buffer;
  private used = 0;
  private timer: NodeJS.Timeout | undefined;

  private readonly maxDelayMs: number;
  private readonly writeSync: (lines: Buffer) => void;

  constructor(
    private readonly out: BatchOutput,
    options: { maxDelayMs?: number; maxBytes?: number; writeSync?: (lines: Buffer) => void } = {},
  ) {
    this.maxDelayMs = options.maxDelayMs ?? LOG_BATCH_MS;
    this.pending = Buffer.allocUnsafeSlow(options.maxBytes ?? LOG_BATCH_BYTES);
    this.writeSync = options.writeSync ?? ((lines) => void out.write(lines));
    // What waits when the process exits without `flush` first.
    process.once('exit', () => {
      try {
        this.flushSync();
      } catch {
        // `out` was closed already: nothing more can be written.
      }
    });
  }

  write(line: string): void {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8: a line that might not fit goes out after what waits.
    if (line.length * 3 > this.pending.length - this.used) {
      this.drain();
      if (line.length * 3 > this.pending.length) {
        this.out.write(Buffer.from(line));
        return;
      }
    }
    this.used += this.pending.write(line, this.used);
    if (this.timer === undefined) {
      // Unreferenced: a wait for the log never keeps the process alive; the exit handler writes the rest.
      this.timer = setTimeout(this.drain, this.maxDelayMs).unref();
    }
  }

  /** What waits, copied out (the buffer is written to again at once), and the wait ended. */
  private take(): Buffer | null {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.used === 0) return null;
    const lines = Buffer.from(this.pending.subarray(0, this.used));
    this.used = 0;
    return lines;
  }

  private readonly drain = (): void => {
    const lines = this.take();
    if (lines) this.out.write(lines);
  };

  flush(cb?: (err?: Error) => void): void {
    this.drain();
    this.out.flush(cb);
  }

  /** Writes what `out` holds, then what waits here, before returning (the exit path). */
  flushSync(): void {
    const lines = this.take();
    this.out.flushSync();
    if (lines) this.writeSync(lines);
  }
}

/**
 * JSON logs to stdout, written asynchronously (lines that arrive while a write is in flight are coalesced;
 * a synchronous write per request line would cost the ingest path a syscall each); flushed on exit by pino.
 */
export function createLogger(level: Level | 'silent', destination: DestinationStream = pino.destination({ dest: 1, sync: false })): Logger {
  return pino(
    {
      level,
      base: { service: 'hookrelay' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: isoTimeOncePerMs(),
    },
    destination,
  );
}
