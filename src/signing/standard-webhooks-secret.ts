import { Webhook } from 'standardwebhooks';

/** What a standard-webhooks secret looks like, for messages that must never quote the secret itself. */
export const STANDARD_WEBHOOKS_SECRET_FORM = 'a whsec_… base64 key: whsec_ followed by base64, e.g. whsec_ and the output of `openssl rand -base64 32`';

/** True when the standardwebhooks package can decode `secret` (base64, with or without the whsec_ prefix). */
export function isStandardWebhooksSecret(secret: string): boolean {
  try {
    new Webhook(secret);
    return true;
  } catch {
    return false;
  }
}
