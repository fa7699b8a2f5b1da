// Signed, spec-shaped webhook requests with a fresh transfer id each (no duplicates), for autocannon
// (`signedRequest`) and for the open-loop client (`rawSignedRequests`, built before the clock starts).
import { createHmac, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { rawPost } from './fixed-rate.mjs';

const { sampleTransferSucceeded } = await import(fileURLToPath(new URL('../../dist/samples/transfer-succeeded.js', import.meta.url)));
export const SECRET = 'bench-secret';
const PLACEHOLDER = '00000000-0000-4000-8000-000000000000';
const template = JSON.stringify(sampleTransferSucceeded({ paymentMethod: 'BUY_WITH_CARD' })).replace(/"id":"[^"]+"/, `"id":"${PLACEHOLDER}"`);

export function signedBody() {
  const body = template.replace(PLACEHOLDER, randomUUID());
  return { body, headers: { 'content-type': 'application/json', 'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex') } };
}

export const signedRequest = () => ({
  method: 'POST',
  path: '/webhooks/checkout',
  setupRequest(req) {
    const { body, headers } = signedBody();
    return Object.assign(req, { body, headers });
  },
});

export const rawSignedRequests = (count) =>
  Array.from({ length: count }, () => {
    const { body, headers } = signedBody();
    return rawPost('/webhooks/checkout', headers, body);
  });
