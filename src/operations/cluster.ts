import type { ClusterNode, ClusterStore, GoneNode, NewNode } from '../store/cluster-store.js';
import type { ClusterView } from './view-schemas.js';

/** How many nodes that left or went missing a cluster view lists: restarts leave one each. */
export const GONE_NODES_SHOWN = 20;

/**
 * The live nodes sharing this store, the nodes that left or went missing lately (so a dead node does not
 * just drop off the list), and what an operator should know about the live ones: nodes that route with
 * different rule sets (their rule files differ) or run different versions (an upgrade under way).
 * `self` is the node answering (null in the CLI's local mode).
 */
export async function clusterView(store: ClusterStore, self: NewNode | null | undefined): Promise<ClusterView> {
  const [nodes, gone] = await Promise.all([store.listLiveNodes(), store.listGoneNodes(GONE_NODES_SHOWN)]);
  return {
    nodes: nodes.map((node) => nodeView(node, self?.id === node.id)),
    gone: gone.map(goneNodeView),
    warnings: clusterWarnings(nodes),
  };
}

/** What a live and a gone node's views share. */
function nodeIdentity(node: ClusterNode | GoneNode): Omit<ClusterView['gone'][number], 'state' | 'since'> {
  return {
    id: node.id,
    host: node.host,
    pid: node.pid,
    role: node.role,
    version: node.version,
    ruleSetHash: node.ruleSetHash,
    startedAt: new Date(node.startedAt).toISOString(),
  };
}

function nodeView(node: ClusterNode, self: boolean): ClusterView['nodes'][number] {
  return { ...nodeIdentity(node), lastHeartbeat: new Date(node.lastHeartbeat).toISOString(), self };
}

function goneNodeView(node: GoneNode): ClusterView['gone'][number] {
  return { ...nodeIdentity(node), state: node.left ? 'left' : 'missing', since: new Date(node.since).toISOString() };
}

/** One warning per thing that differs between live nodes, naming which node has which value. */
export function clusterWarnings(nodes: readonly ClusterNode[]): ClusterView['warnings'] {
  const warnings: ClusterView['warnings'] = [];
  const differing = (key: 'ruleSetHash' | 'version'): Record<string, string[]> | null => {
    const byValue: Record<string, string[]> = {};
    for (const node of nodes) (byValue[String(node[key] ?? 'none')] ??= []).push(node.id);
    return Object.keys(byValue).length > 1 ? byValue : null;
  };
  const ruleSets = differing('ruleSetHash');
  if (ruleSets) {
    warnings.push({
      code: 'rule_sets_differ',
      message: `Live nodes route with ${Object.keys(ruleSets).length} different rule sets (${describe(ruleSets)}): their rule files differ, so an event is routed by whichever node receives it. Make the rule files the same on every node.`,
      values: ruleSets,
    });
  }
  const versions = differing('version');
  if (versions) {
    warnings.push({
      code: 'versions_differ',
      message: `Live nodes run ${Object.keys(versions).length} different hookrelay versions (${describe(versions)}): fine during a rolling upgrade, finish it.`,
      values: versions,
    });
  }
  return warnings;
}

const describe = (byValue: Record<string, string[]>): string =>
  Object.entries(byValue)
    .map(([value, ids]) => `${value}: ${ids.join(', ')}`)
    .join('; ');
