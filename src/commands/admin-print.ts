import type { BulkResult, DeliveryDetailView, DeliveryView, EventListItemView, EventWithDeliveries, Paged, ResendResult } from './admin-backend.js';
import { printLine } from './output.js';
import { formatTable, shortTime } from './table.js';

/** `delivered`, `none`, or the state with the counts behind it: `pending (1 pending, 2 delivered)`. */
function forwardingText({ state, pending, delivered, dead }: EventListItemView['forwarding']): string {
  const parts = [[pending, 'pending'], [delivered, 'delivered'], [dead, 'dead']].filter(([n]) => (n as number) > 0).map(([n, word]) => `${n} ${word}`);
  return parts.length > 1 ? `${state} (${parts.join(', ')})` : state;
}

export function printEventTable(page: Paged<EventListItemView>): void {
  printLine(formatTable(
    ['ID', 'RECEIVED', 'SOURCE', 'EVENT', 'TRANSFER ID', 'EMAIL', 'VALIDATION', 'COUNT', 'BYTES', 'FORWARDED'],
    page.items.map((e) => [e.id, shortTime(e.receivedAt), e.source, e.event, e.transferId, e.email, e.validation, e.receivedCount, e.bodyBytes, forwardingText(e.forwarding)]),
  ));
  printPageFooter(page);
}

export function printDeliveryTable(page: Paged<DeliveryView>): void {
  printLine(formatTable(
    ['ID', 'EVENT', 'RULE', 'STATE', 'ORIGIN', 'ATTEMPTS', 'LAST STATUS', 'NEXT ATTEMPT', 'LAST ERROR / DEAD REASON'],
    page.items.map((d) => [d.id, d.eventId, d.ruleId, d.state, d.origin, d.attempts, d.lastStatus, shortTime(d.nextAttemptAt), d.deadReason ?? d.lastError]),
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
    const what = a.status !== null ? `HTTP ${a.status}` : `${a.errorCode ?? 'error'}: ${a.errorMessage ?? ''}`;
    printLine(`      #${a.attempt} ${shortTime(a.startedAt)} ${a.urlOrigin} ${what} ${a.durationMs} ms → ${a.outcome}`);
  }
}

export function printEventDetail({ event, deliveries }: EventWithDeliveries): void {
  const fields: [string, unknown][] = [
    ['id', event.id], ['source', event.source], ['event', event.event], ['transfer id', event.transferId],
    ['checkout id', event.checkoutId], ['email', event.email], ['wallet', event.walletAddress], ['validation', event.validation],
    ['received', event.receivedAt], ['last received', event.lastReceivedAt], ['received count', event.receivedCount], ['body bytes', event.bodyBytes],
    ...(event.importedAt ? [['imported', event.importedAt] as [string, unknown]] : []),
  ];
  for (const [name, value] of fields) printLine(`${name.padEnd(15)} ${value ?? '-'}`);
  printLine('\nheaders');
  for (const [name, value] of Object.entries(event.headers)) printLine(`  ${name}: ${value}`);
  printLine('\nbody');
  printLine(event.body);
  printLine(`\ndeliveries (${deliveries.length})`);
  for (const d of deliveries) {
    printLine(`  ${d.id}  rule ${d.ruleId}  ${d.state}  ${d.origin}  attempts ${d.attempts}${d.deadReason ? `  dead: ${d.deadReason}` : ''}`);
    printAttempts(d);
  }
}

export function printReplayed(deliveries: DeliveryView[]): void {
  if (deliveries.length === 0) {
    printLine('no rule matches this event now: nothing replayed');
    return;
  }
  for (const d of deliveries) printLine(`delivery ${d.id} created for rule ${d.ruleId} (${d.state})`);
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
}
