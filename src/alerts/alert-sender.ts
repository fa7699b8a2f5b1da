import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { sendAttempt } from '../delivery/http-sender.js';
import { newMessageId, signatureHeaders } from '../signing/sign.js';

export interface AlertSenderOptions {
  url: string;
  /** Signs each message with hmac-sha256-hex over its body (X-Service-Signature); unsigned without it. */
  secret?: string;
  /** The guarded dispatcher (made on first use): alerts pass the same network guard as deliveries. */
  dispatcher: () => Promise<Dispatcher>;
  logger: Logger;
  timeoutMs?: number;
}

/** Posts one Slack-compatible message (`{"text": ...}`), signed; a failure is logged, never thrown. */
export function createAlertSender(options: AlertSenderOptions): (text: string) => Promise<boolean> {
  return async (text) => {
    const body = JSON.stringify({ text });
    const signing = options.secret ? { scheme: 'hmac-sha256-hex' as const, secret: options.secret } : { scheme: 'none' as const };
    const headers = { 'content-type': 'application/json', ...signatureHeaders(signing, { id: newMessageId(), timestamp: new Date(), body }) };
    const result = await sendAttempt({ url: options.url, headers, body, timeoutMs: options.timeoutMs ?? 10_000, dispatcher: await options.dispatcher() });
    const sent = result.status !== undefined && result.status >= 200 && result.status <= 299;
    if (!sent) options.logger.warn({ status: result.status ?? null, error: result.error?.code ?? null }, 'alert webhook did not accept an alert');
    return sent;
  };
}
