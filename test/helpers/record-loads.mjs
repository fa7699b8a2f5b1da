// Node option `--import <this file>`: appends the URL of every module the process loads through the ESM
// loader (our files, and the packages they import) to the file named by RECORD_LOADS_FILE, as
// `<thread id> <url>` (0: the main thread; worker threads run this too, with hooks of their own).
import { register } from 'node:module';
import { threadId } from 'node:worker_threads';

register(new URL('./record-loads-hooks.mjs', import.meta.url), { data: { file: process.env.RECORD_LOADS_FILE, thread: threadId } });
