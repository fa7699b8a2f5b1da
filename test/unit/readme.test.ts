import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRuleSet } from '../../src/rules/loader.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const readme = read('README.md');
const startScript: string = JSON.parse(read('package.json')).scripts.start;

/** The lines of every ```sh block of a Markdown text, continuation lines joined. */
function shellLines(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.flatMap((block) => block.replace(/\\\n\s*/g, ' ').split('\n')).map((line) => line.trim()).filter(Boolean);
}

afterEach(removeTempDirs);

describe('README', () => {
  it('opens with the two set-up commands', () => {
    const first = shellLines(readme).slice(0, 2).map((line) => line.replace(/\s+#.*$/, ''));
    expect(first).toEqual(['npm ci && npm start', 'npm test']);
  });

  it('runs the CLI through npx in its shell examples, since a clone has no hookrelay on PATH', () => {
    const bare = shellLines(readme).filter((line) => /(^|[;&|]\s*|=\S+\s+)hookrelay\s/.test(line));
    expect(bare).toEqual([]);
    expect(shellLines(readme).some((line) => line.includes('npx hookrelay '))).toBe(true);
  });

  it('shows the start command that npm start and the Docker image run', () => {
    const dockerCmd = JSON.parse(/^CMD (\[.*\])$/m.exec(read('Dockerfile'))![1]!) as string[];
    expect(dockerCmd.join(' ')).toBe(startScript);
    expect(readme).toContain(startScript);
    expect(read('docs/operations.md')).toContain(startScript);
  });

  it("'Try forwarding locally' (docs/rules.md) enables the shipped local-sink rule and its sink listens where the rule sends", async () => {
    const rulesDoc = read('docs/rules.md');
    const start = rulesDoc.indexOf('## Try forwarding locally');
    const section = rulesDoc.slice(start, rulesDoc.indexOf('\n## ', start + 1));
    const lines = shellLines(section);
    // The sed line copies the shipped example by name, enabled; apply the same substitution here.
    const sed = /^sed 's\/(.+?)\/(.*?)\/' rules\/local-sink\.yaml > \S+$/.exec(lines.find((line) => line.startsWith('sed '))!)!;
    const copy = read('rules/local-sink.yaml').replace(new RegExp(sed[1]!, 'm'), sed[2]!);
    const dir = makeTempDir('hookrelay-readme-rules-');
    writeFileSync(join(dir, 'local-sink.yaml'), copy);
    const loaded = await loadRuleSet(dir, {});
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
    const [rule] = loaded.ruleSet.rules;
    expect(rule).toMatchObject({ id: 'local-sink', enabled: true });
    const sinkPort = /\.listen\((\d+),'127\.0\.0\.1'\)/.exec(lines.find((line) => line.startsWith('node -e'))!)![1];
    expect(new URL(rule!.destination.url)).toMatchObject({ hostname: '127.0.0.1', port: sinkPort });
    // Loopback is refused unless allowed: the start command allows exactly the sink's address.
    expect(lines.some((line) => line.includes('HOOKRELAY_ALLOW_NETWORKS=127.0.0.1/32') && line.endsWith('npm start'))).toBe(true);
  });
});
