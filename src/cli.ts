#!/usr/bin/env node
import { CommanderError } from 'commander';
import { createProgram } from './cli-program.js';
import { HookrelayError } from './errors.js';

createProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    // Expected failures (bad settings, unreadable files) get one clear line, not a stack trace.
    const message = err instanceof HookrelayError || err instanceof Error ? err.message : String(err);
    process.stderr.write(`hookrelay: ${message}\n`);
    process.exit(err instanceof HookrelayError && err.code === 'invalid_config' ? 2 : 1);
  });
