import { randomBytes, randomUUID } from 'node:crypto';
import { signHmacSha256Hex } from '../signing/hmac-sha256-hex.js';
import { SERVICE_SIGNATURE_HEADER } from '../signing/scheme.js';
import type { BodyDrift, CheckoutRecord, DeliveryKind, DeliveryRecord, SignatureMode, TransferRecord } from './records.js';
import { isLoopbackUrl } from './schemas.js';
import type { MockRepository } from './store/repository.js';
import { formatTimestamp } from './timestamps.js';
import { TRANSFER_SUCCEEDED, serializeTransferSucceeded } from './webhook-body.js';
import { postWebhook, type DeliveryOutcome, type SenderDeps } from './webhook-sender.js';

export interface DispatchOptions {
  kind: DeliveryKind;
  signature: SignatureMode;
  /** Send the identical bytes twice to every URL, as a retrying sender would. */
  duplicate: boolean;
  /** Send a body of another shape than the spec's (see BodyDrift); default none. */
  drift?: BodyDrift;
}

export interface DispatchDeps extends SenderDeps {
  repository: MockRepository;
  allowRemoteWebhooks: boolean;
}

export type DeliverTransfer = (
  checkout: CheckoutRecord,
  transfer: TransferRecord,
  options: DispatchOptions,
) => Promise<DeliveryRecord[]>;

/** Sends `transfer:succeeded` to every webhook URL of the checkout (URLs in parallel) and records each delivery. */
export function createWebhookDispatcher(deps: DispatchDeps): DeliverTransfer {
  return async (checkout, transfer, options) => {
    const body = serializeTransferSucceeded(transfer, options.drift);
    const headers = {
      'Content-Type': 'application/json',
      [SERVICE_SIGNATURE_HEADER]: signatureFor(options.signature, checkout.webhookSecret, body),
    };
    const copies = options.duplicate ? 2 : 1;

    const perUrl = await Promise.all(
      checkout.webhookUrls.map(async (url) => {
        const records: DeliveryRecord[] = [];
        for (let copy = 0; copy < copies; copy++) {
          const outcome = await deliverOnce(url, body, headers, deps);
          const record: DeliveryRecord = {
            id: randomUUID(),
            checkoutId: checkout.id,
            transferId: transfer.id,
            event: TRANSFER_SUCCEEDED,
            kind: options.kind,
            url,
            signature: options.signature,
            ...outcome,
            body,
          };
          deps.repository.insertDelivery(record);
          records.push(record);
        }
        return records;
      }),
    );
    return perUrl.flat();
  };
}

function deliverOnce(url: string, body: string, headers: Record<string, string>, deps: DispatchDeps): Promise<DeliveryOutcome> {
  // Stored URLs were checked on save; checking again covers a restart with a stricter setting.
  if (!deps.allowRemoteWebhooks && !isLoopbackUrl(url)) {
    const refused: DeliveryOutcome = {
      status: null,
      ok: false,
      error: 'refused: remote webhook URLs are not allowed',
      attempts: 0,
      at: formatTimestamp(deps.now()),
    };
    return Promise.resolve(refused);
  }
  return postWebhook({ url, body, headers }, deps);
}

/** `invalid` is a well-formed HMAC under a random key, so only the key check can reject it. */
export function signatureFor(mode: SignatureMode, secret: string, body: string): string {
  if (mode === 'empty') return '';
  const key = mode === 'valid' ? secret : randomBytes(32).toString('hex');
  return signHmacSha256Hex(key, body);
}
