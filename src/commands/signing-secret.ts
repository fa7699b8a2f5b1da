import type { SignatureScheme } from '../signing/scheme.js';
import { HookrelayError } from '../errors.js';
import { isStandardWebhooksSecret, STANDARD_WEBHOOKS_SECRET_FORM } from '../signing/standard-webhooks-secret.js';

/** Refuses a secret the scheme cannot use, naming where it came from (never the secret), before anything is signed. */
export function checkSecretForScheme(scheme: SignatureScheme, secret: string, origin: string): void {
  if (scheme === 'standard-webhooks' && !isStandardWebhooksSecret(secret)) {
    throw new HookrelayError('bad_request', `${origin} is not a standard-webhooks secret: it must be ${STANDARD_WEBHOOKS_SECRET_FORM}.`);
  }
}
