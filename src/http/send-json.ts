import type { ServerResponse } from 'node:http';
import { toErrorBody, type HookrelayError } from '../errors.js';

/** Writes a JSON response without express: the ingest hot path avoids its per-request overhead. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

export function sendError(res: ServerResponse, err: HookrelayError, headers: Record<string, string> = {}): void {
  sendJson(res, err.status, toErrorBody(err), headers);
}
