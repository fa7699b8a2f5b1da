import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The majors of `engines.node`, e.g. `^20.18.0 || ^22.0.0 || ^24.0.0` → [20, 22, 24]. */
const engineMajors = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node
  .split('||')
  .map((range) => Number(/\^(\d+)\./.exec(range.trim())![1]));

describe('supported Node.js versions', () => {
  it('are the ones CI runs the suite on: the machine\'s own and the registry packages .ci/run fetches', () => {
    const ci = read('.ci/run');
    const extra = /HOOKRELAY_CI_NODE_VERSIONS:-([\d ]+)\}/.exec(ci)![1]!.trim().split(/\s+/).map(Number);
    for (const major of extra) expect(engineMajors).toContain(major);
    // The one left is the machine's own, which .ci/run tests first.
    expect(engineMajors.filter((major) => !extra.includes(major))).toHaveLength(1);
    expect(engineMajors).toContain(Number(process.versions.node.split('.')[0]));
  });

  it('include the one the Docker image runs, in both stages', () => {
    const stages = [...read('Dockerfile').matchAll(/^FROM node:(\d+)-/gm)].map((match) => Number(match[1]));
    expect(stages).toHaveLength(2);
    for (const major of stages) expect(engineMajors).toContain(major);
  });
});
