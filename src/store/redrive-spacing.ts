import type { RedriveSpacing } from './outage-store.js';

export interface RedriveCandidate {
  id: number;
  ruleId: string;
}

/**
 * When each dead letter of a closing outage falls due again, on both backends: oldest first, the first at
 * the close, each next one the gap of the rule before it later, so a destination that has just recovered
 * is not sent the whole backlog at once. Candidates of rules without a gap (not opted in, or removed) are
 * left out and stay dead; they take no place in the line.
 */
export function spaceRedrives(candidates: readonly RedriveCandidate[], spacing: RedriveSpacing, closedAt: number): { id: number; dueAt: number }[] {
  const due: { id: number; dueAt: number }[] = [];
  let dueAt = closedAt;
  for (const { id, ruleId } of [...candidates].sort((a, b) => a.id - b.id)) {
    const gap = spacing.get(ruleId);
    if (gap === undefined) continue;
    due.push({ id, dueAt });
    dueAt += gap;
  }
  return due;
}
