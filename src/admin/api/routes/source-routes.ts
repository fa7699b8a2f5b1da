import { z } from 'zod';
import { HookrelayError } from '../../../errors.js';
import type { OperationsContext } from '../../../operations/context.js';
import { servedSecretOrigin } from '../../../runtime/setting-origins.js';
import { sourceSecretSetting } from '../../../identity/source-secrets.js';
import { defineRoute, type AdminRoute } from '../route-table.js';

const SourceParamsSchema = z.object({ name: z.string().min(1).max(63) }).strict();

const SourceSecretSchema = z.object({
  source: z.string(),
  scheme: z.string(),
  /** The secret senders sign with (the first, during a rotation); null for scheme none. */
  secret: z.string().nullable(),
  /** Secrets this server accepts for the source (more than one during a rotation). */
  secretCount: z.number().int(),
  /** Where it comes from: an environment variable, the config file, or generated (never the value). */
  secretFrom: z.string(),
});

export function sourceRoutes(ctx: OperationsContext): AdminRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/sources/:name/secret',
      operationId: 'getSourceSecret',
      summary: 'The secret this server verifies a source with, and where it comes from',
      description:
        'What `hookrelay secrets show` and `hookrelay send-test` use, so a terminal signs with the secret the server checks rather than its own settings. The admin token is needed, as for every route.',
      params: SourceParamsSchema,
      success: { status: 200, description: 'the secret and its origin', schema: SourceSecretSchema },
      errors: [{ status: 404, description: 'no such source (`not_found`)' }],
      async handle({ params }) {
        const source = ctx.sources.get(params.name);
        if (!source) throw new HookrelayError('not_found', `No source named "${params.name}" is configured on this server.`);
        const generated = source.scheme === 'none' ? null : await ctx.store.getSetting(sourceSecretSetting(source.name));
        const body = {
          source: source.name,
          scheme: source.scheme,
          secret: source.secrets[0] ?? null,
          secretCount: source.secrets.length,
          secretFrom: servedSecretOrigin(source, ctx.env, generated),
        };
        return { status: 200, body };
      },
    }),
  ];
}
