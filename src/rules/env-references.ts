/**
 * `${NAME}` references in rule values (destination URL, header values, signing secret). They are
 * resolved from an env object the caller passes in, once per load. Resolved values are secrets: they
 * are returned to the caller and never written into a message.
 */

export type Env = Readonly<Record<string, string | undefined>>;

const REFERENCE = /\$\{([^}]*)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why `template` is not a well-formed template (`${` left open, or a bad variable name), or null. */
export function templateSyntaxError(template: string): string | null {
  for (const match of template.matchAll(REFERENCE)) {
    const name = match[1] ?? '';
    if (!ENV_NAME.test(name)) return `"\${${name}}" is not a valid environment variable reference (use \${NAME})`;
  }
  if (template.replace(REFERENCE, '').includes('${')) return '"${" is not closed with "}"';
  return null;
}

/** Names referenced by `template`, in order of first appearance. */
export function envReferenceNames(template: string): string[] {
  return [...new Set([...template.matchAll(REFERENCE)].map((match) => match[1] ?? ''))];
}

export function hasEnvReferences(template: string): boolean {
  return envReferenceNames(template).length > 0;
}

export type TemplateResolution = { ok: true; value: string } | { ok: false; missing: string[] };

/** Replaces every reference with its value; an unset or empty variable makes the whole template unresolved. */
export function resolveTemplate(template: string, env: Env): TemplateResolution {
  const missing = envReferenceNames(template).filter((name) => !env[name]);
  if (missing.length > 0) return { ok: false, missing };
  return { ok: true, value: template.replace(REFERENCE, (_, name: string) => env[name] as string) };
}
