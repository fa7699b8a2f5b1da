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
  if (format === 'json') return output === 1 ? pino.destination({ dest: 1, sync: false }) : (output as DestinationStream);
  const { default: pretty } = await import('pino-pretty');
  // Synchronous writes: the last lines before exit reach the terminal.
  return pretty({ destination: output, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', singleLine: true });
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
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
