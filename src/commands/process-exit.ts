import { overdueRuleReads } from '../rules/rule-files.js';

/**
 * Ends the process with `code`. While a rule file read is stuck in the kernel (a hung network mount),
 * a normal exit would never finish: libuv joins its thread-pool threads at exit, and that thread does
 * not return. The process then kills itself, which waits for no thread.
 */
export function exitProcess(code: number, onStuck: (reads: number) => void = () => {}): void {
  const stuck = overdueRuleReads();
  if (stuck === 0) {
    process.exit(code);
  } else {
    onStuck(stuck);
    process.kill(process.pid, 'SIGKILL');
  }
}
