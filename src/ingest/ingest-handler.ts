import type { IngestHandler } from '../http/ingest-route.js';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { DEFAULT_MAX_DEPTH, type Config, type SourceConfig } from '../config.js';
import { HookrelayError, asHookrelayError } from '../errors.js';
import { logsRequest } from '../log.js';
import { lingerOnClose } from '../http/lingering-close.js';
import { sendError, sendJson } from '../http/send-json.js';
import type { RuleEventInput } from '../rules/types.js';
import type { EventStore, NewEvent, SaveEventResult } from '../store/event-store.js';
import type { NewDelivery } from '../store/outbox-store.js';
import { isIdentityEncoding, isJsonContentType } from './content-type.js';
import { eventColumns } from './event-columns.js';
import { checkNesting } from './nesting.js';
import { parseJsonBody } from './parse-json.js';
import type { BodyBudget } from './body-budget.js';
import { BUSY_RETRY_AFTER_S, readRawBody } from './read-body.js';
import { headersToStore } from './stored-headers.js';
import { validateEvent, type SchemaIssue, type ValidatedEvent } from './validate-event.js';
import { quarantinedColumns } from './quarantine-columns.js';
import type { ContractSet } from '../contracts/contract-set.js';
import { MAX_KEPT_ISSUES } from '../contracts/contract-compiler.js';
import { verifySignature } from '../signing/verify-signature.js';

export interface IngestOutcome {
  source: string;
  event: string | null;
  status: number;
  code: string;
  durationMs: number;
}

export interface IngestDeps {
  sources: ReadonlyMap<string, SourceConfig>;
  store: EventStore;
  maxBody: number;
  /** Bytes of bodies held at once over every request (`server.maxBufferedBytes`). */
  budget: BodyBudget;
  /** Levels of nesting a body may have (`maxDepth`); default DEFAULT_MAX_DEPTH. */
  maxDepth?: number;
  logger: Logger;
  /** `errors`: the `ingest` line only for answers of 400 and above (config `logRequests`); default `all`. */
  logRequests?: Config['logRequests'];
  now?: () => number;
  /** Routes the event under the current rule set (`planDeliveries`, rules/plan.ts): the outbox rows committed with it, and the rule set that planned them. */
  routeEvent?: (input: RuleEventInput) => Promise<{ ruleSetHash: string; deliveries: NewDelivery[] }>;
  /** The pinned contracts in force (checked before the commit); absent: none. */
  contracts?: () => ContractSet;
  /** Called once per request after the response is written (metrics). */
  onOutcome?: (outcome: IngestOutcome) => void;
  /** Where each source's secret comes from (never the secret): a 401's log line names it, the answer stays generic. */
  secretOrigins?: ReadonlyMap<string, string>;
}

export type { IngestHandler };

/**
 * POST /webhooks/:source. The order of checks is the contract: source, content type, size, signature over
 * the exact bytes, JSON, schema, then one group-committed write; 200 only after the commit.
 */
export function createIngestHandler(deps: IngestDeps): IngestHandler {
  const now = deps.now ?? Date.now;
  const maxDepth = deps.maxDepth ?? DEFAULT_MAX_DEPTH;
  const logRequests = deps.logRequests ?? 'all';

  async function accept(req: IncomingMessage, source: SourceConfig): Promise<{ saved: SaveEventResult; event: string }> {
    if (!isJsonContentType(req.headers['content-type'])) {
      throw new HookrelayError('unsupported_media_type', 'Content-Type must be application/json.', { contentType: req.headers['content-type'] ?? null });
    }
    if (!isIdentityEncoding(req.headers['content-encoding'])) {
      throw new HookrelayError('unsupported_media_type', 'Content-Encoding is not supported: the signature covers the bytes as sent.', { contentEncoding: req.headers['content-encoding'] });
    }
    const body = await readRawBody(req, deps.maxBody, deps.budget);
    // The body counts against the budget until its answer is decided: it is held through the commit.
    try {
      return await acceptBody(req, source, body);
    } finally {
      deps.budget.release(body.length);
    }
  }

  async function acceptBody(req: IncomingMessage, source: SourceConfig, body: Buffer): Promise<{ saved: SaveEventResult; event: string }> {
    verifySignature(source, req.headers, body, now());
    const parsed = parseJsonBody(body);
    checkNesting(body, maxDepth);
    let validated: ValidatedEvent;
    try {
      validated = validateEvent(parsed);
    } catch (err) {
      await keepInQuarantine(req, source, body, parsed, err);
      throw err;
    }
    const { envelope, validation } = validated;
    // A contract never refuses the webhook: `warn` records its violations, `quarantine` holds the event unrouted.
    const violation = deps.contracts?.().check(source.name, envelope.event, parsed) ?? null;
    const held = violation?.mode === 'quarantine';
    const routed = deps.routeEvent && !held ? await deps.routeEvent({ source: source.name, event: envelope.event, body: parsed, raw: body }) : null;
    const deliveries = routed?.deliveries ?? [];
    const event: NewEvent = {
      source: source.name,
      ...eventColumns(envelope, validation),
      receivedAt: now(),
      headers: headersToStore(req.headers),
      body,
      ruleSetHash: routed?.ruleSetHash ?? null,
      deliveries,
    };
    if (violation) {
      event.issues = { from: 'contract', contract: violation.file, issues: violation.issues };
      event.held = held;
    }
    const saved = await deps.store.saveEvent(event);
    return { saved, event: envelope.event };
  }

  /**
   * An authentic body (its signature held) that fails the event schema is kept, held in quarantine with its
   * issues, before the 422 goes out; should the store fail, the sender gets the store's 503 and may send again.
   */
  async function keepInQuarantine(req: IncomingMessage, source: SourceConfig, body: Buffer, parsed: unknown, err: unknown): Promise<void> {
    if (!(err instanceof HookrelayError) || err.code !== 'invalid_payload') return;
    const issues = (err.details as { issues: SchemaIssue[] }).issues;
    const saved = await deps.store.saveEvent({
      source: source.name,
      ...quarantinedColumns(parsed, body),
      receivedAt: now(),
      headers: headersToStore(req.headers),
      body,
      issues: { from: 'schema', issues: issues.slice(0, MAX_KEPT_ISSUES) },
      held: true,
    });
    deps.logger.warn({ source: source.name, eventId: saved.id, duplicate: saved.duplicate }, 'body failing the event schema kept in quarantine');
  }
  /** For the operator reading the log: which secret the signature was checked against. */
  const signatureHint = (sourceName: string): Record<string, unknown> => {
    const secretFrom = deps.secretOrigins?.get(sourceName);
    return secretFrom === undefined ? {} : { secretFrom, hint: `checked with the secret of source "${sourceName}" from ${secretFrom}; \`hookrelay secrets show ${sourceName}\` prints it` };
  };

  return (req, res, sourceName, requestId) => {
    const started = performance.now();
    const source = deps.sources.get(sourceName);
    let eventName: string | null = null;

    const finish = (status: number, code: string, extra: Record<string, unknown> = {}): void => {
      const durationMs = Math.round((performance.now() - started) * 100) / 100;
      if (logsRequest(logRequests, status)) deps.logger.info({ reqId: requestId, source: sourceName, event: eventName, status, code, durationMs, ...extra }, 'ingest');
      deps.onOutcome?.({ source: sourceName, event: eventName, status, code, durationMs });
    };

    const fail = (err: unknown): void => {
      const error = asHookrelayError(err);
      if (error.status >= 500) deps.logger.error({ reqId: requestId, err: error.cause ?? error }, 'ingest failed');
      // The body may be unread (early refusal): the connection closes after the answer, lingering so that
      // a client still sending reads the answer instead of a reset.
      const headers: Record<string, string> = { 'x-request-id': requestId };
      if (!req.complete) {
        headers.connection = 'close';
        lingerOnClose(req.socket);
      }
      if (error.code === 'server_busy') headers['retry-after'] = String(BUSY_RETRY_AFTER_S);
      if (!res.headersSent) sendError(res, error, headers);
      finish(error.status, error.code, error.status === 401 ? signatureHint(sourceName) : {});
    };

    if (!source) {
      fail(new HookrelayError('unknown_source', `No source named "${sourceName}" is configured.`, { source: sourceName }));
      return;
    }
    accept(req, source).then(({ saved, event }) => {
      eventName = event;
      sendJson(res, 200, { id: saved.id, duplicate: saved.duplicate, receivedCount: saved.receivedCount }, { 'x-request-id': requestId });
      finish(200, saved.duplicate ? 'duplicate' : 'stored', { eventId: saved.id });
    }, fail);
  };
}
