import type { IncomingMessage } from 'node:http';
import { HookrelayError } from '../errors.js';
import type { BodyBudget } from './body-budget.js';

/** Seconds a sender refused for want of buffer space is asked to wait (`Retry-After`). */
export const BUSY_RETRY_AFTER_S = 1;

function tooLarge(limit: number): HookrelayError {
  return new HookrelayError('payload_too_large', `The body is larger than ${limit} bytes.`, { limit });
}

function busy(): HookrelayError {
  return new HookrelayError('server_busy', 'The receiver holds as many request bodies as it allows; retry shortly.', { retryAfterSeconds: BUSY_RETRY_AFTER_S });
}

/**
 * Reads the exact request bytes within the size limit and the shared buffer budget. A declared
 * Content-Length is checked and reserved before any byte is read, then the bytes are copied into one
 * buffer of that size as they arrive (the socket's chunks are let go at once); a chunked body reserves
 * each chunk as it comes. On success the body's length stays reserved: the caller releases
 * `body.length` once the body is no longer needed. On failure this releases what it reserved and stops
 * buffering: what the client still sends is discarded, not kept.
 */
export function readRawBody(req: IncomingMessage, limit: number, budget: BodyBudget): Promise<Buffer> {
  const header = req.headers['content-length'];
  const declared = header === undefined ? -1 : Number(header);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  if (declared >= 0 && !budget.tryReserve(declared)) return Promise.reject(busy());
  return new Promise<Buffer>((resolve, reject) => {
    let reserved = declared >= 0 ? declared : 0;
    let received = 0;
    let sized: Buffer | null = null;
    let chunks: Buffer[] | null = declared >= 0 ? null : [];

    const stop = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const failWith = (error: HookrelayError): void => {
      stop();
      budget.release(reserved);
      reserved = 0;
      sized = null;
      chunks = null;
      // Keep the stream flowing with nobody listening: the rest is read and dropped, never held.
      req.resume();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      const end = received + chunk.length;
      if (declared >= 0) {
        // The HTTP parser never passes more than Content-Length; this guards the copy regardless.
        if (end > declared) return failWith(new HookrelayError('bad_request', 'The body length does not match Content-Length.'));
        sized ??= Buffer.allocUnsafe(declared);
        chunk.copy(sized, received);
      } else {
        if (end > limit) return failWith(tooLarge(limit));
        if (!budget.tryReserve(chunk.length)) return failWith(busy());
        reserved += chunk.length;
        chunks!.push(chunk);
      }
      received = end;
    };
    const onEnd = (): void => {
      if (declared >= 0 && received !== declared) return failWith(new HookrelayError('bad_request', 'The body length does not match Content-Length.'));
      stop();
      resolve(declared >= 0 ? (sized ?? Buffer.alloc(0)) : Buffer.concat(chunks!, received));
    };
    const onError = (err: Error): void => {
      failWith(new HookrelayError('bad_request', 'The request body could not be read (client aborted or stream error).', null, { cause: err }));
    };
    const onClose = (): void => {
      if (!req.complete) failWith(new HookrelayError('bad_request', 'The request body could not be read (client aborted or stream error).'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
