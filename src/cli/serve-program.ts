import type { Command } from 'commander';
import { rootCommand } from './root.js';
import { registerServeCommand } from '../commands/serve.js';

/**
 * The program with `serve` alone, for `hookrelay serve`: a long-running receiver does not load (and keep
 * in memory) the other commands' code. The full program (cli-program.ts) declares `serve` the same way.
 */
export function createServeProgram(): Command {
  const program = rootCommand();
  registerServeCommand(program);
  return program;
}
