import type { BulkControl, BulkResult } from './admin-target.js';
import { printBulk } from './admin-print.js';
import { INTERRUPTED_EXIT_CODE, onInterrupt } from './interrupt.js';
import { printJson } from './output.js';
import { createProgress } from './progress-bar.js';

/** Runs a bulk replay or retry with a progress bar and Ctrl-C handling, then prints what was done. */
export async function runBulk(label: string, noun: string, json: boolean, operation: (control: BulkControl) => Promise<BulkResult>): Promise<void> {
  const interrupt = onInterrupt(label);
  const progress = createProgress(label);
  let barStarted = false;
  try {
    const result = await operation({
      signal: interrupt.signal,
      onProgress: (p) => {
        if (!barStarted) progress.start(p.total);
        barStarted = true;
        progress.update(p.processed, p.total);
      },
    });
    progress.stop();
    barStarted = false;
    if (json) printJson(result);
    else printBulk(noun, result);
    if (result.state === 'cancelled') process.exitCode = interrupt.signal.aborted ? INTERRUPTED_EXIT_CODE : 1;
    if (result.state === 'failed') process.exitCode = 1;
  } finally {
    if (barStarted) progress.stop();
    interrupt.dispose();
  }
}
