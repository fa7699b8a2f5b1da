import { clusterView } from '../../../operations/cluster.js';
import type { OperationsContext } from '../../../operations/context.js';
import { ClusterSchema } from '../../../operations/view-schemas.js';
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
  ];
}
