import { Option, type Command } from 'commander';
import { HookrelayError } from '../errors.js';
import type { DeliveryState } from '../store/outbox-store.js';
import { printDeliveryTable } from './admin-print.js';
import { runBulk } from './bulk-run.js';
import { addTargetOptions, openTarget, withTarget, type TargetFlags } from './command-target.js';
import { addEventFilterOptions, eventQueryOf, positiveInt, type EventFilterFlags } from './event-filter-flags.js';
import { exitQuietlyWhenStdoutCloses, printJson, printLine } from './output.js';

async function list(flags: TargetFlags & { state?: DeliveryState; rule?: string; eventId?: string; limit: string; cursor?: string }): Promise<void> {
  const limit = positiveInt(flags.limit, '--limit', 500);
  const query = {
    ...(flags.state && { state: flags.state }),
    ...(flags.rule && { ruleId: flags.rule }),
    ...(flags.eventId && { eventId: positiveInt(flags.eventId, '--event-id') }),
  };
  const page = await withTarget(await openTarget(flags, process.env), (b) => b.listDeliveries(query, { limit, cursor: flags.cursor }));
  if (flags.json) printJson(page);
  else printDeliveryTable(page);
}

async function retry(id: string | undefined, flags: TargetFlags & EventFilterFlags & { rule?: string; eventId?: string; all?: boolean; afterId?: string }): Promise<void> {
  await withTarget(await openTarget(flags, process.env), async (b) => {
    if (id !== undefined) {
      const delivery = await b.retryDelivery(positiveInt(id, 'delivery id'));
      if (flags.json) printJson(delivery);
      else printLine(`delivery ${delivery.id} is ${delivery.state} again, due now`);
      return;
    }
    if (flags.deliveryState !== undefined) throw new HookrelayError('bad_request', 'deliveries retry takes dead-lettered deliveries only: --delivery-state does not apply.');
    const query = {
      ...eventQueryOf(flags),
      ...(flags.rule && { ruleId: flags.rule }),
      ...(flags.eventId && { eventId: positiveInt(flags.eventId, '--event-id') }),
    };
    if (Object.keys(query).length === 0 && !flags.all) throw new HookrelayError('bad_request', 'Give a delivery id, a filter (e.g. --rule), or --all to retry every dead-lettered delivery.');
    const afterId = flags.afterId === undefined ? undefined : positiveInt(flags.afterId, '--after-id');
    await runBulk('retry', 'dead deliveries', Boolean(flags.json), (control) => b.retryDeliveries({ ...query, afterId }, control));
  });
}

export function registerDeliveriesCommand(program: Command): void {
  const deliveries = program
    .command('deliveries')
    .description('List deliveries and retry dead-lettered ones (local data dir, or a server with --url)')
    .hook('preAction', exitQuietlyWhenStdoutCloses);

  addTargetOptions(deliveries.command('list').description('List deliveries, newest first'))
    .addOption(new Option('--state <state>', 'delivery state').choices(['pending', 'delivered', 'dead']))
    .option('--rule <id>', 'rule id')
    .option('--event-id <id>', 'deliveries of this event')
    .option('--limit <n>', 'deliveries per page (1-500)', '50')
    .option('--cursor <cursor>', 'continue after the previous page')
    .action(list);

  addEventFilterOptions(addTargetOptions(deliveries.command('retry').description('Make a delivery pending and due now; without an id, every dead-lettered delivery the filter selects')))
    .argument('[id]', 'one delivery (delivered or dead)')
    .option('--rule <id>', 'dead deliveries of this rule')
    .option('--event-id <id>', 'dead deliveries of this event')
    .option('--all', 'with no id and no filter: every dead-lettered delivery')
    .option('--after-id <id>', 'local mode: only deliveries after this id (carry on after an interruption)')
    .action(retry);
}
