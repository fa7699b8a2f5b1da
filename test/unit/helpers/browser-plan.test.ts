import { describe, expect, it } from 'vitest';
import { planBrowserTests } from '../../helpers/browser.js';
import { testRequires } from '../../helpers/test-require.js';

/** A file system in which exactly `executables` exist and may be run. */
const only = (...executables: string[]) => (path: string) => executables.includes(path);

describe('planBrowserTests', () => {
  it('runs the browser CHROMIUM_PATH names, whatever is on PATH', () => {
    const plan = planBrowserTests({ CHROMIUM_PATH: '/opt/chrome/chrome', PATH: '/usr/bin' }, only('/opt/chrome/chrome', '/usr/bin/chromium'));
    expect(plan).toEqual({ action: 'run', executablePath: '/opt/chrome/chrome' });
  });

  it('fails when CHROMIUM_PATH names no executable file, rather than skipping what was asked for', () => {
    const plan = planBrowserTests({ CHROMIUM_PATH: '/opt/none/chrome', PATH: '/usr/bin' }, only('/usr/bin/chromium'));
    expect(plan).toEqual({ action: 'fail', reason: 'CHROMIUM_PATH=/opt/none/chrome is not an executable file' });
  });

  it('looks on PATH for chromium, then chromium-browser, then google-chrome', () => {
    const PATH = '/usr/local/bin:/usr/bin:/snap/bin';
    expect(planBrowserTests({ PATH }, only('/snap/bin/chromium', '/usr/bin/chromium-browser'))).toEqual({ action: 'run', executablePath: '/snap/bin/chromium' });
    expect(planBrowserTests({ PATH }, only('/usr/bin/chromium-browser', '/usr/local/bin/google-chrome'))).toEqual({
      action: 'run',
      executablePath: '/usr/bin/chromium-browser',
    });
    expect(planBrowserTests({ PATH }, only('/usr/local/bin/google-chrome'))).toEqual({ action: 'run', executablePath: '/usr/local/bin/google-chrome' });
  });

  it('skips with the reason where no browser is found', () => {
    const plan = planBrowserTests({ PATH: '/usr/bin:/bin' }, only('/opt/chromium/chromium'));
    expect(plan).toEqual({
      action: 'skip',
      reason: 'no Chromium found (CHROMIUM_PATH is not set and none of chromium, chromium-browser, google-chrome is on PATH)',
    });
    expect(planBrowserTests({}, only('/usr/bin/chromium')).action).toBe('skip');
  });

  it('fails where no browser is found and HOOKRELAY_TEST_REQUIRE lists chromium', () => {
    const plan = planBrowserTests({ PATH: '/usr/bin', HOOKRELAY_TEST_REQUIRE: 'postgres,chromium' }, only());
    expect(plan.action).toBe('fail');
    expect(plan).toHaveProperty('reason', expect.stringContaining('HOOKRELAY_TEST_REQUIRE lists chromium'));
    expect(planBrowserTests({ PATH: '/usr/bin', HOOKRELAY_TEST_REQUIRE: 'postgres' }, only()).action).toBe('skip');
  });
});

describe('testRequires', () => {
  it('reads HOOKRELAY_TEST_REQUIRE as a comma-separated list', () => {
    const env = { HOOKRELAY_TEST_REQUIRE: ' Postgres , chromium' };
    expect(testRequires('postgres', env)).toBe(true);
    expect(testRequires('chromium', env)).toBe(true);
    expect(testRequires('chromium', { HOOKRELAY_TEST_REQUIRE: 'postgres' })).toBe(false);
    expect(testRequires('postgres', {})).toBe(false);
  });
});
