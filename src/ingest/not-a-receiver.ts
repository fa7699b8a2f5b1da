import { HookrelayError } from '../errors.js';
import { sendError } from '../http/send-json.js';
import type { IngestHandler } from './ingest-handler.js';

/**
 * The webhook route of a node with role `worker`: every webhook is answered 503 `not_a_receiver`, which a
 * load balancer reads as "try another node", and the node's /readyz says not ready so health-checking
 * balancers stop sending to it. The body is not read: the connection closes after the answer.
 */
export function notAReceiverHandler(): IngestHandler {
  return (_req, res, sourceName) => {
    sendError(res, new HookrelayError('not_a_receiver', `This node runs role worker and receives no webhooks (POST /webhooks/${sourceName}); send them to a node with role all or receiver.`), { connection: 'close' });
  };
}
