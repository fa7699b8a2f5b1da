import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url);
const doc = readFileSync(new URL('docs/architecture.md', root), 'utf8');

describe('docs/architecture.md', () => {
  it('names only files and folders of src/ that exist', () => {
    const named = [...new Set([...doc.matchAll(/`(src\/[^`\s]+)`/g)].map((match) => match[1]!))];
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((path) => !existsSync(new URL(path, root)))).toEqual([]);
  });
});
