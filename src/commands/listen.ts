import { Option, type Command } from 'commander';
import type { StreamedEventView } from '../operations/view-schemas.js';
import { streamStart } from '../operations/stream-position.js';
import { streamedEventView } from '../operations/views.js';
import { loadConfig } from '../config.js';
import { HookrelayError } from '../errors.js';
import { SqliteEventReader } from '../store/sqlite/event-reader.js';
import type { NewEventReader } from '../store/new-event-store.js';
import { remoteAdminToken } from './command-target.js';
import { readEventStream } from './event-stream-client.js';
import { INTERRUPTED_EXIT_CODE, pauseUnlessAborted } from './interrupt.js';
import { forwardEvent, forwardHeaders, originalSignatureExpired, type ForwardResult, type ForwardSigning, type ResignScheme } from './listen-forward.js';

interface ListenFlags {
  dataDir?: string;
  url?: string;
  token?: string;
  forwardTo?: string;
  event?: string;
  source?: string;
  since?: string;
  signSecret?: string;
  signScheme?: ResignScheme;
  json?: boolean;
}

/** What `listen` does with each event, wherever the events come from. */
export interface ListenOutput {
  forwardTo?: string;
  filter: { event?: string; source?: string };
  since?: string;
  signing: ForwardSigning;
  json: boolean;
}

export interface ListenOptions extends ListenOutput {
  /** Base URL of the server. */
  url: string;
  token: string;
}

type StreamedEvent = Required<Pick<StreamedEventView, 'headers' | 'bodyBase64'>> & StreamedEventView;

/** What `--since` takes (as the event stream's `since`): an event id or a duration. */
const SINCE = /^(\d+|\d+(\.\d+)?\s*(ms|s|m|h|d))$/;
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 15_000;
/** Answers that a retry cannot change: the command stops with them instead of reconnecting. */
const FINAL_CODES = new Set(['unauthorized', 'forbidden', 'bad_request', 'not_found']);

function streamUrl(options: ListenOptions, since: string | undefined): string {
  const base = new URL(options.url);
  const url = new URL(`${base.origin}${base.pathname.replace(/\/+$/, '')}/admin/api/events/stream`);
  url.searchParams.set('body', 'true');
  if (options.filter.event !== undefined) url.searchParams.set('event', options.filter.event);
  if (options.filter.source !== undefined) url.searchParams.set('source', options.filter.source);
  if (since !== undefined) url.searchParams.set('since', since);
  return url.toString();
}

function amountOf(body: Buffer): string {
  try {
    const total = (JSON.parse(body.toString('utf8')) as { result?: { totalPriceUsd?: unknown } }).result?.totalPriceUsd;
    return typeof total === 'number' ? `${total.toFixed(2)} USD` : '-';
  } catch {
    return '-';
  }
}

function forwardText(result: ForwardResult): string {
  return result.error === null ? `→ ${result.status} in ${result.durationMs} ms` : `→ failed: ${result.error} after ${result.durationMs} ms`;
}

/** Rows read per query in local mode, and the pause between two reads that found nothing new. */
const LOCAL_BATCH = 50;
const LOCAL_POLL_MS = 100;

/**
 * What happens to each event: with `forwardTo` its exact bytes are POSTed there (the next event waits for
 * the answer, so they arrive in order), then one line is printed. A Standard Webhooks signature too old for
 * verifiers is said once.
 */
function eventHandler(options: ListenOutput, signal: AbortSignal, print: (line: string) => void, note: (line: string) => void): (event: StreamedEvent) => Promise<void> {
  let warnedExpired = false;
  return async (event) => {
    const body = Buffer.from(event.bodyBase64, 'base64');
    let forward: ForwardResult | undefined;
    if (options.forwardTo !== undefined) {
      const now = new Date();
      if (options.signing.mode === 'original' && !warnedExpired && originalSignatureExpired(event.headers, now.getTime())) {
        warnedExpired = true;
        note(`event ${event.id} and older ones carry a Standard Webhooks signature older than 5 minutes, which verifiers refuse: pass --sign-secret <your endpoint's secret> to re-sign them`);
      }
      forward = await forwardEvent(options.forwardTo, body, forwardHeaders(event, body, options.signing, now), signal);
    }
    if (options.json) {
      print(JSON.stringify({ id: event.id, receivedAt: event.receivedAt, source: event.source, event: event.event, checkoutId: event.checkoutId, transferId: event.transferId, imported: event.imported, ...(forward && { forward }) }));
    } else {
      const columns = [event.receivedAt, `#${event.id}`, event.event, `checkout ${event.checkoutId ?? '-'}`, amountOf(body), ...(event.imported ? ['(imported)'] : []), ...(forward ? [forwardText(forward)] : [])];
      print(columns.join('  '));
    }
  };
}

/**
 * Follows the server's event stream: prints one line per event and, with `forwardTo`, POSTs its exact bytes
 * there, one at a time in order. Reconnects with backoff and resumes after the last event seen; returns
 * when `signal` aborts, throws when the server refuses the request itself (token, parameters).
 */
export async function runListen(options: ListenOptions, signal: AbortSignal, print: (line: string) => void, note: (line: string) => void): Promise<void> {
  const handle = eventHandler(options, signal, print, note);
  let lastEventId: string | undefined;
  let backoff = FIRST_BACKOFF_MS;
  while (!signal.aborted) {
    try {
      const messages = readEventStream({
        url: streamUrl(options, lastEventId === undefined ? options.since : undefined),
        token: options.token,
        lastEventId,
        signal,
        onOpen: () => {
          backoff = FIRST_BACKOFF_MS;
          note(`listening on ${options.url}${options.forwardTo ? `, forwarding to ${options.forwardTo}` : ''} (Ctrl-C to stop)`);
        },
      });
      for await (const message of messages) {
        if (message.event === 'ready') {
          // Where the stream starts: resuming from there misses nothing stored meanwhile.
          lastEventId ??= message.id ?? (JSON.parse(message.data) as { lastEventId: string }).lastEventId;
        } else if (message.event === 'end') {
          note(`the server ended the stream: ${(JSON.parse(message.data) as { message: string }).message}`);
        } else if (message.event === 'event') {
          const event = JSON.parse(message.data) as StreamedEvent;
          await handle(event);
          lastEventId = message.id ?? String(event.id);
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof HookrelayError && FINAL_CODES.has(err.code)) throw err;
      note(`connection lost (${(err as Error).message})`);
    }
    if (signal.aborted) return;
    note(`reconnecting in ${(backoff / 1000).toFixed(1)} s, after event ${lastEventId ?? 'none yet'}`);
    await pauseUnlessAborted(backoff, signal);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  }
}

/**
 * Local mode: follows the events of a data dir by reading its store directly (a read-only connection beside
 * a server that may be writing it, or with no server at all), every LOCAL_POLL_MS. Same lines, same
 * forwarding, same `--since` as against a server; returns when `signal` aborts.
 */
export async function runLocalListen(reader: NewEventReader, options: ListenOutput, signal: AbortSignal, print: (line: string) => void, note: (line: string) => void): Promise<void> {
  const handle = eventHandler(options, signal, print, note);
  let position = await streamStart(reader, undefined, options.since, Date.now());
  while (!signal.aborted) {
    const { events, position: next } = await reader.readNewEvents(options.filter, position, LOCAL_BATCH, true);
    for (const event of events) {
      if (signal.aborted) return;
      await handle(streamedEventView(event) as StreamedEvent);
    }
    position = next;
    if (events.length < LOCAL_BATCH) await pauseUnlessAborted(LOCAL_POLL_MS, signal);
  }
}

export function registerListenCommand(program: Command): void {
  program
    .command('listen')
    .description('Print events as they are stored and forward each to a local endpoint (--forward-to)')
    .option('--data-dir <dir>', 'local mode (the default): the data dir to follow, read directly (HOOKRELAY_DATA_DIR, default ./data)')
    .option('--url <url>', 'remote mode: a running server, e.g. http://127.0.0.1:8080 (follows its event stream)')
    .option('--token <token>', 'remote mode: admin token (default: HOOKRELAY_ADMIN_TOKEN, else for a server on this machine <data dir>/admin.token)')
    .option('--forward-to <url>', 'POST each event\'s exact bytes here, with its content type and signature; localhost is fine')
    .option('--event <name>', 'only this event name, e.g. transfer:succeeded')
    .option('--source <name>', 'only this source')
    .option('--since <id|duration>', 'first play the events after this event id, or of the last duration (10m, 2h)')
    .option('--sign-secret <secret>', 're-sign forwarded events with this secret instead of sending the signature they arrived with')
    .addOption(new Option('--sign-scheme <scheme>', 'with --sign-secret: the scheme (default: the one each event arrived with)').choices(['hmac-sha256-hex', 'standard-webhooks']))
    .option('--json', 'one JSON line per event, for scripts')
    .action(async (flags: ListenFlags) => {
      const env = process.env;
      if (flags.signScheme !== undefined && flags.signSecret === undefined) throw new HookrelayError('bad_request', '--sign-scheme needs --sign-secret.');
      if (flags.forwardTo !== undefined && !/^https?:\/\//.test(flags.forwardTo)) throw new HookrelayError('bad_request', `--forward-to must be an http(s) URL, got "${flags.forwardTo}".`);
      if (flags.since !== undefined && !SINCE.test(flags.since)) throw new HookrelayError('bad_request', `--since must be an event id (1234) or a duration (10m, 2h), got "${flags.since}".`);
      if (flags.url !== undefined && flags.dataDir !== undefined) throw new HookrelayError('bad_request', '--url (remote mode) and --data-dir (local mode) exclude each other.');
      const output: ListenOutput = {
        ...(flags.forwardTo !== undefined && { forwardTo: flags.forwardTo }),
        filter: { ...(flags.event !== undefined && { event: flags.event }), ...(flags.source !== undefined && { source: flags.source }) },
        ...(flags.since !== undefined && { since: flags.since }),
        signing: flags.signSecret === undefined ? { mode: 'original' } : { mode: 'resign', scheme: flags.signScheme ?? 'as-received', secret: flags.signSecret },
        json: flags.json === true,
      };
      const print = (line: string): boolean => process.stdout.write(`${line}\n`);
      const note = (line: string): boolean => process.stderr.write(`${line}\n`);
      // Ctrl-C stops at once: the open request or read and any forward in flight are aborted.
      const controller = new AbortController();
      const stop = (): void => controller.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        if (flags.url !== undefined) {
          await runListen({ ...output, url: flags.url, token: await remoteAdminToken(flags.url, flags.token, env) }, controller.signal, print, note);
        } else {
          const config = loadConfig(env, flags.dataDir ? { dataDir: flags.dataDir } : {});
          if (config.database.url !== undefined) {
            throw new HookrelayError('bad_request', 'Local mode reads the SQLite data dir, and this configuration uses PostgreSQL (database.url): pass --url <a node> to follow its event stream.');
          }
          const reader = SqliteEventReader.open(config.dataDir);
          try {
            note(`listening to ${config.dataDir}${output.forwardTo ? `, forwarding to ${output.forwardTo}` : ''} (Ctrl-C to stop)`);
            await runLocalListen(reader, output, controller.signal, print, note);
          } finally {
            reader.close();
          }
        }
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
      if (controller.signal.aborted) {
        process.stderr.write('stopped\n');
        process.exitCode = INTERRUPTED_EXIT_CODE;
      }
    });
}
