import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { HookrelayError } from '../errors.js';

function tooLarge(limit: number): HookrelayError {
  return new HookrelayError('payload_too_large', `The body is larger than ${limit} bytes.`, { limit });
}

/**
 * Reads the exact request bytes, refusing an over-limit body by its Content-Length before reading, or as
 * soon as a chunked body passes the limit, so an oversized upload is never held in memory.
 */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  try {
    return await getRawBody(req, { length: declared, limit });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw tooLarge(limit);
    if (type === 'request.size.invalid') {
      throw new HookrelayError('bad_request', 'The body length does not match Content-Length.');
    }
    throw new HookrelayError('bad_request', 'The request body could not be read (client aborted or stream error).', null, { cause: err });
  }
}
