import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../../src/cli/program.js';

const doc = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');

/** Every command that runs something, by its full name (`events list`). */
function leafCommands(command: Command, prefix: string[] = []): { name: string; command: Command }[] {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return sub.commands.length > 0 ? leafCommands(sub, path) : [{ name: path.join(' '), command: sub }];
  });
}

/** The text of a command's section in docs/cli.md, plus the shared sections it points to. */
function sectionOf(name: string): string {
  const start = doc.indexOf(`## \`hookrelay ${name}\``);
  if (start < 0) return '';
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const shared = section.includes('(#local-and-remote-mode)') ? doc.slice(doc.indexOf('## Local and remote mode'), doc.indexOf('## `hookrelay serve`')) : '';
  return section + shared;
}

describe('docs/cli.md', () => {
  const commands = leafCommands(createProgram());

  it('has a section for every command, and none for a command that does not exist', () => {
    const documented = [...doc.matchAll(/^## `hookrelay ([a-z -]+)`$/gm)].map((match) => match[1]);
    expect(documented.sort()).toEqual(commands.map((c) => c.name).sort());
  });

  it.each(commands.map((c) => [c.name, c.command] as const))('lists every flag of %s', (name, command) => {
    const section = sectionOf(name);
    const flags = command.options.filter((option) => !option.hidden).map((option) => option.long!);
    expect(flags.filter((flag) => !section.includes(`\`${flag}`) && !section.includes(`, ${flag}`))).toEqual([]);
  });
});
