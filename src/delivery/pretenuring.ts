import { setFlagsFromString } from 'node:v8';

/**
 * Turns V8's allocation-site pretenuring off for the process once it delivers. Pretenuring allocates the
 * objects of an allocation site straight in the old generation once they have survived a scavenge in bulk;
 * a backlog drained once is enough for the sites of the delivery path, and from then on every delivery's
 * objects, dead within milliseconds, fill the old generation until a full collection (at 1,728 deliveries a
 * second the delivery thread promoted 11–30 MB per 10 s with it, under 2 MB without; bench/README.md). A
 * process that only receives keeps V8's default. V8 reads the flag at every collection, for every thread of
 * the process; an operator's own setting, either way, wins.
 */
export function stopPretenuring(execArgv: readonly string[] = process.execArgv, setFlags: (flags: string) => void = setFlagsFromString): boolean {
  if (execArgv.some((arg) => /^--(no-)?allocation[-_]site[-_]pretenuring\b/.test(arg))) return false;
  setFlags('--no-allocation-site-pretenuring');
  return true;
}
