import { isStandardWebhooksSecret, STANDARD_WEBHOOKS_SECRET_FORM } from '../signing/standard-webhooks-secret.js';
import { envReferenceNames, hasEnvReferences, resolveTemplate, type Env } from './env-references.js';
import type { PathSegment } from './query-validation.js';
import type { RuleDefinition } from './schema.js';
import type { Signing } from '../signing/scheme.js';

/**
 * Resolves the `${ENV}` references of one rule and checks what only the resolved values can show (an
 * http(s) URL, header values without line breaks, a decodable standard-webhooks secret). Messages quote
 * the template as written in the file, never a resolved value.
 */

export interface ResolutionIssue {
  path: PathSegment[];
  message: string;
}

export interface ResolvedDestination {
  url: string;
  headers: Record<string, string>;
  signing: Signing;
  /** Problems that stop the rule from loading. */
  errors: ResolutionIssue[];
  /** Unset variables of a disabled rule: reported, but the rule loads (unresolved) since it sends nothing. */
  warnings: ResolutionIssue[];
}

/** The parts of a rule that hold `${ENV}` references, and whether it is enabled (unset variables only warn when not). */
export type ReferencedParts = Pick<RuleDefinition, 'to' | 'sign' | 'enabled'>;

export function resolveRuleReferences(def: ReferencedParts, env: Env): ResolvedDestination {
  const errors: ResolutionIssue[] = [];
  const warnings: ResolutionIssue[] = [];

  /** The resolved value, or null (after recording why) when a variable is unset. */
  const resolve = (template: string, path: PathSegment[]): string | null => {
    const resolution = resolveTemplate(template, env);
    if (resolution.ok) return resolution.value;
    const names = resolution.missing.join(', ');
    const message = `environment variable ${names} ${resolution.missing.length === 1 ? 'is' : 'are'} not set`;
    if (def.enabled) errors.push({ path, message });
    else warnings.push({ path, message: `${message} (the rule is disabled, so it still loads)` });
    return null;
  };

  const url = resolve(def.to.url, ['to', 'url']);
  if (url !== null && !isHttpUrl(url)) {
    const verb = hasEnvReferences(def.to.url) ? 'does not resolve to' : 'is not';
    errors.push({ path: ['to', 'url'], message: `"${def.to.url}" ${verb} an http or https URL` });
  }

  const headers: Record<string, string> = {};
  for (const [name, template] of Object.entries(def.to.headers ?? {})) {
    const value = resolve(template, ['to', 'headers', name]);
    if (value !== null && /[\r\n\0]/.test(value)) {
      errors.push({ path: ['to', 'headers', name], message: `the value of ${envReferenceNames(template).join(', ')} contains a line break` });
    }
    headers[name] = value ?? template;
  }

  let signing: Signing = { scheme: 'none' };
  if (def.sign.scheme !== 'none') {
    const secret = resolve(def.sign.secret, ['sign', 'secret']);
    if (secret !== null && def.sign.scheme === 'standard-webhooks' && !isStandardWebhooksSecret(secret)) {
      errors.push({ path: ['sign', 'secret'], message: `must be ${STANDARD_WEBHOOKS_SECRET_FORM}` });
    }
    signing =
      def.sign.scheme === 'standard-webhooks'
        ? { scheme: 'standard-webhooks', secret: secret ?? def.sign.secret }
        : { scheme: 'hmac-sha256-hex', secret: secret ?? def.sign.secret, header: def.sign.header };
  }

  return { url: url ?? def.to.url, headers, signing, errors, warnings };
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
