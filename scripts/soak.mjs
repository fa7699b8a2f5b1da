// The long version of the reliability suites (test/reliability): SOAK=1 raises cycle and case counts
// (200 kill cycles, 10x the fuzz cases, more rounds of the fault matrix). Extra arguments go to vitest,
// e.g. `npm run soak -- crash-safety` for one suite. RELIABILITY_SEED=<n> repeats a randomised run.
// `--nodes=N` and `--cycles=N` size the cluster-kill suite (N nodes on one PostgreSQL, N kills; 3 and 60).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const clusterFlags = { '--nodes': 'RELIABILITY_CLUSTER_NODES', '--cycles': 'RELIABILITY_CLUSTER_CYCLES' };
const clusterEnv = {};
const args = process.argv.slice(2).filter((arg) => {
  const [flag, value] = arg.split('=');
  if (!(flag in clusterFlags)) return true;
  if (!/^[1-9]\d*$/.test(value ?? '')) {
    console.error(`${flag} takes a positive whole number, e.g. ${flag}=5`);
    process.exit(2);
  }
  clusterEnv[clusterFlags[flag]] = value;
  return false;
});
const filters = args.length > 0 && !args[0].startsWith('-') ? args : ['test/reliability'];
const started = Date.now();
const child = spawn(process.execPath, [vitest, 'run', ...filters.map((f) => (f.startsWith('test/') ? f : `test/reliability/${f}`)), ...args.filter((a) => a.startsWith('-'))], {
  stdio: 'inherit',
  env: { ...process.env, ...clusterEnv, SOAK: '1' },
});
child.on('exit', (code, signal) => {
  console.log(`soak finished in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exit(signal ? 1 : (code ?? 1));
});
