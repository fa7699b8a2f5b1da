// Loader hooks of record-loads.mjs (they run on the loader's own thread).
import { appendFileSync } from 'node:fs';

let file;
let thread;

export function initialize(data) {
  file = data.file;
  thread = data.thread;
}

export async function load(url, context, nextLoad) {
  appendFileSync(file, `${thread} ${url}\n`);
  return nextLoad(url, context);
}
