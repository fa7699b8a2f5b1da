// Why a pending delivery waits and until when, from the API's `wait`: a paused destination (circuit, per
// node), the failing first delivery of its order key, the retry schedule, the destination's limits.
import { h, timeEl } from './dom.js';

function attemptText(wait) {
  return wait.attempt.of === null ? `Attempt ${wait.attempt.next} (past the schedule)` : `Attempt ${wait.attempt.next} of ${wait.attempt.of}`;
}

/** The headline: what it waits for, with the times as <time> elements. */
function headline(wait) {
  const attempt = attemptText(wait);
  const onNode = wait.node ? ` on node ${wait.node}` : '';
  switch (wait.reason) {
    case 'circuit_open':
      return ['Destination paused', onNode, ' until ', timeEl(wait.until), `, then ${attempt.toLowerCase()}`];
    case 'order_blocked':
      return [`Blocked behind delivery #${wait.blockedBy}`, ...(wait.until ? [', its next attempt ', timeEl(wait.until)] : [])];
    case 'retry_schedule':
    case 'destination_failing':
      return [`${attempt} `, timeEl(wait.until)];
    case 'concurrency':
      return [`${attempt}: waiting for a slot${onNode}`];
    case 'rate_limit':
      return [`${attempt}: sent in turn under the rate limit`, ...(wait.until ? [', its turn ', timeEl(wait.until)] : [])];
    case 'rule_removed':
      return ['Rule removed'];
    default:
      return [`${attempt}: due now`];
  }
}

/** The block under a pending delivery's header; without `wait` (an older server) only the next attempt time. */
export function deliveryWait(delivery) {
  const wait = delivery.wait;
  if (!wait) return delivery.nextAttemptAt ? h('p', { class: 'muted' }, 'Next attempt ', timeEl(delivery.nextAttemptAt)) : null;
  const since = wait.since && (wait.reason === 'circuit_open' || wait.reason === 'destination_failing') ? [' · failing since ', timeEl(wait.since)] : [];
  return h(
    'div',
    { class: 'delivery-wait', dataset: { reason: wait.reason } },
    h('p', { class: 'wait-headline' }, h('strong', {}, ...headline(wait)), ...since),
    h('p', { class: 'muted wait-why', text: wait.message }),
  );
}
