#!/usr/bin/env node
import { CommanderError } from 'commander';
import { HookrelayError } from './errors.js';

// `serve` runs for months: it loads only its own command, not the code of every other one.
const program = process.argv[2] === 'serve' ? (await import('./cli/serve-program.js')).createServeProgram() : (await import('./cli/program.js')).createProgram();
program
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    // Expected failures (bad settings, unreadable files) get one clear line, not a stack trace.
    const message = err instanceof HookrelayError || err instanceof Error ? err.message : String(err);
    process.stderr.write(`hookrelay: ${message}\n`);
    process.exit(err instanceof HookrelayError && err.code === 'invalid_config' ? 2 : 1);
  });
