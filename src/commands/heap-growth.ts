import { setFlagsFromString } from 'node:v8';

/** Percent the old generation may grow past its live size before a full collection (V8's default lets it quadruple). */
export const HEAP_GROWING_PERCENT = 15;

/**
 * Keeps V8 from letting the old generation grow up to four times its live size before a full collection.
 * Under sustained ingest, objects of requests still waiting for their commit survive two scavenges and are
 * promoted; with the default factor that garbage piles up to several times the live heap before it is
 * collected, and each full collection of the larger heap is a longer pause. Set at
 * start-up (V8 reads the flag at every collection); an operator's own --heap-growing-percent wins.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv, setFlags: (flags: string) => void = setFlagsFromString): boolean {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return false;
  setFlags(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
