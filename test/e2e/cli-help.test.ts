import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';

describe('command help matches what commands do', () => {
  it('events import offers only local options, and explains --url when given anyway', async () => {
    const help = runCli(['events', 'import', '--help']);
    expect((await help.exited).code).toBe(0);
    expect(help.stdout()).toContain('--data-dir <dir>');
    expect(help.stdout()).not.toContain('--url');
    expect(help.stdout()).not.toContain('--token');
    const remote = runCli(['events', 'import', '-', '--url', 'http://127.0.0.1:9']);
    expect((await remote.exited).code).toBe(1);
    expect(remote.stderr()).toBe('hookrelay: events import writes to a data dir directly: the admin API has no import, so --url is not available. Run it beside the data dir, with --data-dir <dir>.\n');
  });
});
