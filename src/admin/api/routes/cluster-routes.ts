import { clusterView } from '../../../operations/cluster.js';
import type { OperationsContext } from '../../../operations/context.js';
import { ClusterSchema, ReadinessSchema } from '../../../operations/view-schemas.js';
import { HookrelayError } from '../../../errors.js';
import { RuntimeInfoSchema } from '../../../runtime/runtime-file.js';
import { defineRoute, type AdminRoute } from '../route-table.js';

export function clusterRoutes(ctx: OperationsContext): AdminRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/cluster',
      operationId: 'getCluster',
      summary: 'The live nodes sharing this database, with warnings when their rule sets or versions differ',
      description:
        'A node is live while its last heartbeat (every `cluster.heartbeatMs`, 5 s by default) is younger than three of its intervals; a node that stops cleanly leaves at once. The node that answered is marked `self`. With SQLite there is one node.',
      success: { status: 200, description: 'the live nodes, oldest first, and warnings', schema: ClusterSchema },
      async handle() {
        return { status: 200, body: await clusterView(ctx.store, ctx.node) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/node',
      operationId: 'getNode',
      summary: "This node's runtime record: its URLs, pid, node id, version, store, allow-list, and where its admin token and source secrets come from (never a secret)",
      description:
        'The contents of the `hookrelay.runtime.json` that `hookrelay serve` wrote for this process. Commands read it from the data dir; for a node found only in the node registry (PostgreSQL, another machine or data dir) they ask this route instead, so they judge with that node\'s settings.',
      success: { status: 200, description: 'the runtime record', schema: RuntimeInfoSchema },
      errors: [{ status: 404, description: 'this process was not started by `hookrelay serve`, or another node has written the data dir\'s record since (`not_found`)' }],
      async handle() {
        const info = ctx.runtime?.();
        if (!info) throw new HookrelayError('not_found', 'This node has no runtime record of its own (not started by hookrelay serve).');
        return { status: 200, body: info };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/readiness',
      operationId: 'getReadiness',
      summary: "This node's readiness with the checks behind it: start-up, store, rule set (with the last reload error), role, delivery loop",
      description:
        'The unauthenticated `/readyz` says only ready (200) or not (503); this is the same answer with its reasons, for operators, read at once from what the node knows (the latest commits and a probe each second). Always 200: `status` says ready or not.',
      success: { status: 200, description: 'ready or not, and why', schema: ReadinessSchema },
      async handle() {
        if (!ctx.readiness) throw new HookrelayError('not_found', 'Readiness is reported by a running server.');
        const report = await ctx.readiness();
        return { status: 200, body: { status: report.ready ? 'ready' : 'not_ready', checks: report.checks } };
      },
    }),
  ];
}
