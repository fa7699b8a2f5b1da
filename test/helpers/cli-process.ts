import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The built CLI, as `npm start` and the Dockerfile run it (`npm test` builds first). */
export const CLI_PATH = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** The words of `npm start` (package.json), e.g. ["node", "--max-semi-space-size=4", "--initial-old-space-size=40", "dist/cli.js", "serve"]. */
export const START_COMMAND: readonly string[] = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);

/** The node options `npm start` runs the CLI with. */
export const START_NODE_OPTIONS: readonly string[] = START_COMMAND.slice(1, START_COMMAND.indexOf('dist/cli.js'));

export interface CliProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first parsed JSON log line that satisfies `predicate`. */
  waitForLog: (predicate: (line: Record<string, any>) => boolean, timeoutMs?: number) => Promise<Record<string, any>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

// Whatever a test forgets (or a timeout skips), no server outlives the test worker that started it.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function runCli(args: string[], options: { env?: Record<string, string>; cwd?: string; input?: string; nodeOptions?: readonly string[] } = {}): CliProcess {
  const child = spawn(process.execPath, [...(options.nodeOptions ?? []), CLI_PATH, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  let err = '';
  const waiters: { predicate: (line: Record<string, any>) => boolean; resolve: (line: Record<string, any>) => void }[] = [];
  const seen: Record<string, any>[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    const before = out;
    out += chunk.toString();
    const complete = out.slice(before.lastIndexOf('\n') + 1).split('\n').slice(0, -1);
    for (const text of complete) {
      try {
        const line = JSON.parse(text) as Record<string, any>;
        seen.push(line);
        for (const waiter of [...waiters]) {
          if (waiter.predicate(line)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      } catch {
        // plain-text output (help, tables) is read through stdout()
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  if (options.input !== undefined) child.stdin!.end(options.input);
  else child.stdin!.end();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));

  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForLog: (predicate, timeoutMs = 15_000) => {
      const already = seen.find(predicate);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching log line within ${timeoutMs} ms; stdout:\n${out}\nstderr:\n${err}`)), timeoutMs);
        exited.then(() => setTimeout(() => reject(new Error(`process exited before a matching log line; stdout:\n${out}\nstderr:\n${err}`)), 50));
        waiters.push({ predicate, resolve: (line) => { clearTimeout(timer); resolve(line); } });
      });
    },
  };
}

/**
 * Starts `hookrelay serve` as `npm start` does, on an ephemeral loopback port; resolves once it listens
 * (rejects after `timeoutMs`: a start takes seconds on a busy shared machine).
 */
export async function startServeProcess(env: Record<string, string>, args: string[] = [], timeoutMs = 60_000): Promise<CliProcess & { url: string }> {
  const proc = runCli(['serve', ...args], { env: { HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_PORT: '0', ...env }, nodeOptions: START_NODE_OPTIONS });
  const listening = await proc.waitForLog((line) => line.msg === 'hookrelay listening', timeoutMs).catch((err: unknown) => {
    proc.child.kill('SIGKILL'); // a server that did not start in time must not outlive the test
    throw err;
  });
  return { ...proc, url: listening.url as string };
}
