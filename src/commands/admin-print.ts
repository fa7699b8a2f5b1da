import type {
  BulkResult, DeliveryDetailView, DeliveryView, EditedReplayResultView, EventListItemView, EventWithDeliveries, Paged, ReplayResultView, ResendResult,
} from './admin-target.js';
import type { BulkReplaySummary } from '../operations/bulk-replay-plan.js';
import type { DeliveryWaitView } from '../operations/view-schemas.js';
import type { RetrySkip, RetrySummary } from '../operations/retry-skips.js';
import { printLine } from './output.js';
import { formatTable, shortTime, usdAmount } from './table.js';

/** `delivered`, `none`, or the state with the counts behind it: `pending (1 pending, 2 delivered)`. */
function forwardingText({ state, pending, delivered, dead }: EventListItemView['forwarding']): string {
  const parts = [[pending, 'pending'], [delivered, 'delivered'], [dead, 'dead']].filter(([n]) => (n as number) > 0).map(([n, word]) => `${n} ${word}`);
  return parts.length > 1 ? `${state} (${parts.join(', ')})` : state;
}

/** The event name; an edited copy says which event it was edited from, as the console's badge does. */
function eventName(e: EventListItemView): string {
  const name = e.edit ? `${e.event} (edited #${e.edit.editedFrom})` : e.event;
  return e.quarantine ? `${name} (${e.quarantine})` : name;
}

export function printEventTable(page: Paged<EventListItemView>): void {
  printLine(formatTable(
    ['ID', 'RECEIVED', 'SOURCE', 'EVENT', 'AMOUNT USD', 'TRANSFER ID', 'EMAIL', 'VALIDATION', 'COUNT', 'BYTES', 'FORWARDED'],
    page.items.map((e) => [
      e.id, shortTime(e.receivedAt), e.source, eventName(e), usdAmount(e.totalPriceUsd), e.transferId, e.email, e.validation, e.receivedCount, e.bodyBytes,
      forwardingText(e.forwarding),
    ]),
  ));
  printPageFooter(page);
}

/** `paused` for a pending delivery its disabled rule holds: its next attempt time is only when the worker looks again. */
function stateText(d: Pick<DeliveryView, 'state' | 'pausedReason'>): string {
  return d.pausedReason ? 'paused' : d.state;
}

/** A pending delivery's wait in a few words, e.g. `circuit open until 2026-05-01 12:00:00Z (node n_1)`, `attempt 3 of 4 at ...`. */
export function waitText(wait: DeliveryWaitView | null | undefined): string | null {
  if (!wait) return null;
  const until = wait.until ? shortTime(wait.until) : null;
  const node = wait.node ? ` (node ${wait.node})` : '';
  const attempt = wait.attempt.of === null ? `attempt ${wait.attempt.next} (past the schedule)` : `attempt ${wait.attempt.next} of ${wait.attempt.of}`;
  switch (wait.reason) {
    case 'circuit_open': return `circuit open until ${until}${node}, then ${attempt}`;
    case 'order_blocked': return `behind #${wait.blockedBy} (order key blocked)`;
    case 'retry_schedule': return `${attempt} at ${until}`;
    case 'destination_failing': return `${attempt} at ${until}; destination failing`;
    case 'concurrency': return `${attempt}: destination at its concurrency limit${node}`;
    case 'rate_limit': return `${attempt}: in turn under the rule's rate limit${until ? ` (turn ${until})` : ''}`;
    case 'due': return `${attempt}: due now`;
    case 'rule_disabled': return 'rule disabled';
    case 'rule_removed': return 'rule removed';
  }
}

export function printDeliveryTable(page: Paged<DeliveryView>): void {
  printLine(formatTable(
    ['ID', 'EVENT', 'RULE', 'STATE', 'ORIGIN', 'ATTEMPTS', 'LAST STATUS', 'NEXT ATTEMPT', 'LAST ERROR / DEAD REASON', 'WAITING'],
    page.items.map((d) => [
      d.id, d.eventId, d.ruleId, stateText(d), d.origin, d.attempts, d.lastStatus,
      d.pausedReason ? null : shortTime(d.nextAttemptAt), d.deadReason ?? d.pausedReason ?? d.lastError, waitText(d.wait),
    ]),
    60,
  ));
  printPageFooter(page);
}

function printPageFooter(page: Paged<unknown>): void {
  if (page.items.length === 0) printLine('(none)');
  if (page.nextCursor !== null) printLine(`\nmore: add --cursor ${page.nextCursor}`);
}

function printAttempts(delivery: DeliveryDetailView): void {
  for (const a of delivery.attemptLog) {
    const what = a.status !== null ? `HTTP ${a.status}` : `${a.sent === false ? 'not sent, ' : 'no response, '}${a.errorCode ?? 'error'}: ${a.errorMessage ?? ''}`;
    printLine(`      #${a.attempt} ${shortTime(a.startedAt)} ${a.urlOrigin} ${what} ${a.durationMs} ms → ${a.outcome}`);
  }
  for (const r of delivery.redrives ?? []) printLine(`      ${r.kind === 'probe' ? 'redriven as a probe' : 'redriven'} ${shortTime(r.redrivenAt)} after outage ${r.outageId}`);
}

export function printEventDetail({ event, deliveries }: EventWithDeliveries): void {
  const fields: [string, unknown][] = [
    ['id', event.id], ['source', event.source], ['event', event.event], ['transfer id', event.transferId],
    ['checkout id', event.checkoutId], ['email', event.email], ['wallet', event.walletAddress],
    ['amount usd', usdAmount(event.totalPriceUsd)], ['validation', event.validation],
    ['received', event.receivedAt], ['last received', event.lastReceivedAt], ['received count', event.receivedCount], ['body bytes', event.bodyBytes],
    ...(event.importedAt ? [['imported', event.importedAt] as [string, unknown]] : []),
    ['rule set', event.ruleSetHash ?? 'unknown (stored before rule sets were kept)'],
    ...(event.edit ? [['edited from', `event ${event.edit.editedFrom} (edit ${event.edit.number}, via ${event.edit.via}, ${event.edit.editedAt})`] as [string, unknown]] : []),
    ...(event.quarantine ? [['quarantine', event.quarantine === 'held' ? 'held: stored, not routed until released' : 'released'] as [string, unknown]] : []),
    ...(event.release ? [['released', `${event.release.releasedAt} by ${event.release.releasedBy}${event.release.forced ? ' (forced)' : ''}`] as [string, unknown]] : []),
  ];
  for (const [name, value] of fields) printLine(`${name.padEnd(15)} ${value ?? '-'}`);
  if (event.issues) {
    printLine(`\nissues (${event.issues.from === 'schema' ? 'event schema' : `contract ${event.issues.contract}`})`);
    for (const issue of event.issues.issues) printLine(`  ${issue.path}: ${issue.message}`);
  }
  printLine('\nheaders');
  for (const [name, value] of Object.entries(event.headers)) printLine(`  ${name}: ${value}`);
  printLine('\nbody');
  printLine(event.body);
  printLine(`\ndeliveries (${deliveries.length})`);
  for (const d of deliveries) {
    const why = d.deadReason ? `  dead: ${d.deadReason}` : d.pausedReason ? `  paused: ${d.pausedReason}` : '';
    printLine(`  ${d.id}  rule ${d.ruleId}  ${stateText(d)}  ${d.origin}  attempts ${d.attempts}${why}`);
    if (d.wait && !d.pausedReason) printLine(`      waiting: ${waitText(d.wait)}: ${d.wait.message}`);
    printAttempts(d);
  }
}

export function printReplayed(answer: ReplayResultView): void {
  const rules = answer.route === 'current' ? "today's rules" : 'the rules that routed it';
  printLine(`route ${answer.route}: ${rules} (rule set ${answer.ruleSetHash})${answer.dryRun ? ', dry run: nothing is sent' : ''}`);
  if (answer.planned.length === 0) printLine(answer.route === 'current' ? 'no rule matches this event now: nothing replayed' : 'no rule of that set is sent: nothing replayed');
  for (const send of answer.planned) {
    const verb = answer.dryRun ? 'would send' : 'sends';
    printLine(`  rule ${send.ruleId} ${verb} ${send.method} ${send.destination} (${Buffer.byteLength(send.body)} bytes, ${send.contentType})${send.deadReason ? `, dead: ${send.deadReason}` : ''}`);
  }
  for (const held of answer.withheld) printLine(`  not sent: ${held.reason}`);
  for (const d of answer.deliveries) printLine(`delivery ${d.id} created for rule ${d.ruleId} (${d.state})`);
}

export function printEditedReplay(answer: EditedReplayResultView): void {
  const copy = answer.event!;
  printLine(`edited copy stored as event ${copy.id} (edit ${copy.edit?.number} of event ${copy.edit?.editedFrom}, validation ${copy.validation})`);
  if (answer.changes.length === 0) printLine('  no change from the original');
  for (const c of answer.changes) {
    const before = c.change === 'added' ? '' : `${JSON.stringify(c.before)} `;
    const after = c.change === 'removed' ? '(removed)' : JSON.stringify(c.after);
    printLine(`  ${c.change === 'added' ? '+' : c.change === 'removed' ? '-' : '~'} ${c.path || '(whole body)'}: ${before}${c.change === 'changed' ? '-> ' : ''}${after}`);
  }
  if (answer.appliedWithoutMatch) printLine(`the rule's filter does not match the edited body (${answer.appliedWithoutMatch}): applied anyway`);
  if (answer.planned.length === 0) printLine('no rule matches the edited body: nothing sent');
  for (const send of answer.planned) printLine(`  rule ${send.ruleId} sends ${send.method} ${send.destination}${send.deadReason ? `, dead: ${send.deadReason}` : ''}`);
  for (const d of answer.deliveries) printLine(`delivery ${d.id} created for rule ${d.ruleId} (${d.state})`);
}

export function printResend(result: ResendResult): void {
  const error = result.error ? `${result.error.code}: ${result.error.message}` : null;
  printLine(error ? `failed after ${result.durationMs} ms: ${error}` : `HTTP ${result.status} in ${result.durationMs} ms`);
  if (result.responseExcerpt) printLine(result.responseExcerpt);
}

export function printBulk(noun: string, result: BulkResult): void {
  const job = result.jobId ? `job ${result.jobId} ` : '';
  printLine(`${job}${result.state}: ${result.processed} of ${result.total} ${noun} processed, ${result.created} deliveries queued, ${result.failed} failed`);
  if (result.error) printLine(`error: ${result.error}`);
  if (result.resumeAfterId !== undefined) printLine(`to carry on, run the same command with --after-id ${result.resumeAfterId}`);
  if (result.summary && 'skipped' in result.summary) printRetrySkips((result.summary as RetrySummary).skipped);
  else if (result.summary) printReplaySummary(result.summary as Partial<BulkReplaySummary>);
}

/** A bulk retry's skipped dead deliveries, per rule, with why: e.g. "skipped 4 dead deliveries of rule old-sink: ...". */
function printRetrySkips(skipped: RetrySkip[]): void {
  for (const skip of skipped) printLine(`skipped ${skip.count} dead deliver${skip.count === 1 ? 'y' : 'ies'}: ${skip.message}`);
}

function printReplaySummary(summary: Partial<BulkReplaySummary>): void {
  printLine(`route ${summary.route}${summary.dryRun ? ', dry run: nothing was sent; "queued" counts what would be' : ''}`);
  for (const [ruleId, count] of Object.entries(summary.perRule ?? {})) printLine(`  rule ${ruleId}: ${count}`);
  for (const [ruleId, count] of Object.entries(summary.withheld ?? {})) printLine(`  rule ${ruleId}: ${count} not sent (removed or disabled in today's rules)`);
  if (summary.unknownRouting) printLine(`  ${summary.unknownRouting} events were stored before rule sets were kept: their original routing is unknown, not replayed (use --route current)`);
  if (summary.sample?.length) printLine('sample');
  for (const send of summary.sample ?? []) printLine(`  event ${send.eventId} -> rule ${send.ruleId} (${send.ruleSetHash}) ${send.destination}`);
}
