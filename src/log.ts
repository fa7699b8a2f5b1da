import { pino, type Logger, type DestinationStream, type Level } from 'pino';
import { SERVICE_SIGNATURE_HEADER } from './signing/scheme.js';

export type { Logger };

/**
 * Header and field paths that may carry secrets or signatures: never written to a log line. Every path names
 * its top-level key: pino then redacts only lines that have one of these keys. A path starting with a
 * wildcard (`*.secret`) would send every value of every line (each ingest request, each delivery attempt)
 * through the redactor, which parses its paths and clones on each call: that was 40 % of all memory the
 * delivery worker allocated.
 */
const REDACTED_HEADERS = ['authorization', 'cookie', SERVICE_SIGNATURE_HEADER.toLowerCase(), 'webhook-signature'];

export const REDACT_PATHS = [
  ...REDACTED_HEADERS.flatMap((name) => [`req.headers["${name}"]`, `headers["${name}"]`]),
  'secret',
  'secrets',
  'token',
];

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
