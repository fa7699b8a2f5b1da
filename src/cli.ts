#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerDeliveriesCommand } from './commands/deliveries.js';
import { registerEventsCommand } from './commands/events.js';
import { registerSendTestCommand } from './commands/send-test.js';
import { registerRulesCommand } from './commands/rules.js';
import { registerServeCommand } from './commands/serve.js';
import { registerSignCommand } from './commands/sign.js';
import { HookrelayError } from './errors.js';
import { registerMockCheckoutCommand } from './mock-checkout/command.js';
import { VERSION } from './version.js';

const program = new Command()
  .name('hookrelay')
  .description('Receive, store, route and replay signed checkout webhooks')
  .version(VERSION)
  .showHelpAfterError();

registerServeCommand(program);
registerSignCommand(program);
registerSendTestCommand(program);
registerMockCheckoutCommand(program);
registerRulesCommand(program);
registerEventsCommand(program);
registerDeliveriesCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  // Expected failures (bad settings, unreadable files) get one clear line, not a stack trace.
  const message = err instanceof HookrelayError || err instanceof Error ? err.message : String(err);
  process.stderr.write(`hookrelay: ${message}\n`);
  process.exit(err instanceof HookrelayError && err.code === 'invalid_config' ? 2 : 1);
});
