import { pino, type Logger, type DestinationStream, type Level } from 'pino';
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
  if (format === 'json') return output === 1 ? new TurnBatchedDestination(pino.destination({ dest: 1, sync: false })) : (output as DestinationStream);
  const { default: pretty } = await import('pino-pretty');
  // Synchronous writes: the last lines before exit reach the terminal.
  return pretty({ destination: output, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', singleLine: true });
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

interface FlushableDestination extends DestinationStream {
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
}

/**
 * Hands the lines logged during one turn of the event loop to `out` as one write. Under load a turn answers
 * a whole group commit's requests, each with its log line: one write (a file system request and its
 * callback) for all of them instead of one per line. A line waits at most until the end of its turn.
 */
export class TurnBatchedDestination implements DestinationStream {
  private pending = '';
  private scheduled = false;

  constructor(private readonly out: FlushableDestination) {
    // The last turn's lines when the process exits without `flush` first.
    process.once('exit', () => {
      try {
        this.flushSync();
      } catch {
        // `out` was closed already: nothing more can be written.
      }
    });
  }

  write(line: string): void {
    this.pending += line;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    if (this.pending === '') return;
    const lines = this.pending;
    this.pending = '';
    this.out.write(lines);
  };

  flush(cb?: (err?: Error) => void): void {
    this.drain();
    this.out.flush(cb);
  }

  flushSync(): void {
    this.drain();
    this.out.flushSync();
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
