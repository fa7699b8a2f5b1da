import { Command } from 'commander';
import { VERSION } from '../version.js';

/** The root command, before any subcommand is registered. */
export function rootCommand(): Command {
  return new Command().name('hookrelay').description('Receive, store, route and replay signed checkout webhooks').version(VERSION).showHelpAfterError();
}
