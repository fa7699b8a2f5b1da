import type { Command } from 'commander';
import { rootCommand } from './root.js';
import { registerClusterCommand } from '../commands/cluster.js';
import { registerSchemaCommand } from '../commands/schema.js';
import { registerDeliveriesCommand } from '../commands/deliveries.js';
import { registerEventsCommand } from '../commands/events.js';
import { registerListenCommand } from '../commands/listen.js';
import { registerRulesCommand } from '../commands/rules.js';
import { registerSecretsCommand } from '../commands/secrets.js';
import { registerSendTestCommand } from '../commands/send-test.js';
import { registerServeCommand } from '../commands/serve.js';
import { registerSignCommand } from '../commands/sign.js';
import { registerStoreCommand } from '../commands/store-copy.js';
import { registerMockCheckoutCommand } from '../mock-checkout/command.js';

/** Every command and its flags, without parsing anything: the entry point runs it, tests read it. */
export function createProgram(): Command {
  const program = rootCommand();

  registerServeCommand(program);
  registerSignCommand(program);
  registerSendTestCommand(program);
  registerMockCheckoutCommand(program);
  registerRulesCommand(program);
  registerEventsCommand(program);
  registerDeliveriesCommand(program);
  registerListenCommand(program);
  registerStoreCommand(program);
  registerClusterCommand(program);
  registerSchemaCommand(program);
  registerSecretsCommand(program);
  return program;
}
