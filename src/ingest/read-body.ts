import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import getRawBody from 'raw-body';
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

/** Passes a chunked body through, reserving each chunk in the budget; fails the stream at the first that does not fit. */
function reservingChunks(budget: BodyBudget, reserved: { bytes: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (!budget.tryReserve(chunk.length)) return callback(busy());
      reserved.bytes += chunk.length;
      callback(null, chunk);
    },
  });
}

/**
 * Reads the exact request bytes within the size limit and the shared buffer budget. A declared
 * Content-Length is checked and reserved before any byte is read; a chunked body reserves each chunk as
 * it arrives. On success the body's length stays reserved: the caller releases `body.length` once the
 * body is no longer needed. On failure this releases what it reserved and lets the rest of the upload be
 * read and dropped, never held.
 */
export async function readRawBody(req: IncomingMessage, limit: number, budget: BodyBudget): Promise<Buffer> {
  const header = req.headers['content-length'];
  const declared = header === undefined ? undefined : Number(header);
  if (declared !== undefined && declared > limit) throw tooLarge(limit);
  if (declared !== undefined && !budget.tryReserve(declared)) throw busy();
  const reserved = { bytes: declared ?? 0 };
  try {
    const source = declared === undefined ? req.pipe(reservingChunks(budget, reserved)) : req;
    return await getRawBody(source, { length: declared, limit });
  } catch (err) {
    budget.release(reserved.bytes);
    req.resume();
    if (err instanceof HookrelayError) throw err;
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw tooLarge(limit);
    if (type === 'request.size.invalid') throw new HookrelayError('bad_request', 'The body length does not match Content-Length.');
    throw new HookrelayError('bad_request', 'The request body could not be read (client aborted or stream error).', null, { cause: err });
  }
}
