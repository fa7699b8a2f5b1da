import type { Command } from 'commander';
import type { ClusterView } from './admin-target.js';
import { addTargetOptions, openTarget, withTarget, type TargetFlags } from './command-target.js';
import { exitQuietlyWhenStdoutCloses, printJson, printLine } from './output.js';
import { formatTable, shortTime } from './table.js';

/**
 * The nodes as a table, `*` marking the one that answered, then each warning on a line of its own, then the
 * nodes that left or went missing lately (a server older than this one lists none).
 */
export function clusterLines(view: ClusterView): string[] {
  const lines: string[] = [];
  if (view.nodes.length === 0) lines.push('no live nodes (no hookrelay serve is running on this store)');
  else {
    const rows = view.nodes.map((n) => [`${n.id}${n.self ? ' *' : ''}`, n.host, n.pid, n.role, n.version, n.ruleSetHash, shortTime(n.startedAt), shortTime(n.lastHeartbeat)]);
    lines.push(formatTable(['NODE', 'HOST', 'PID', 'ROLE', 'VERSION', 'RULE SET', 'STARTED', 'LAST HEARTBEAT'], rows));
  }
  for (const warning of view.warnings) lines.push(`warning: ${warning.message}`);
  const gone = view.gone ?? [];
  if (gone.length > 0) {
    const rows = gone.map((n) => [n.id, n.host, n.pid, n.role, n.version, n.state === 'left' ? `left ${shortTime(n.since)}` : `missing since ${shortTime(n.since)}`]);
    lines.push('', 'gone in the last day:', formatTable(['NODE', 'HOST', 'PID', 'ROLE', 'VERSION', 'STATE'], rows));
  }
  return lines;
}

async function show(flags: TargetFlags): Promise<void> {
  const view = await withTarget(await openTarget(flags, process.env), (b) => b.cluster());
  if (flags.json) printJson(view);
  else for (const line of clusterLines(view)) printLine(line);
}

export function registerClusterCommand(program: Command): void {
  addTargetOptions(
    program
      .command('cluster')
      .description('List the live nodes sharing the store (role, version, rule set, last heartbeat) and warn when they differ (local data dir, or a server with --url)')
      .hook('preAction', exitQuietlyWhenStdoutCloses),
  ).action(show);
}
