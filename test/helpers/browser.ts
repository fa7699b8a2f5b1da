import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe, it } from 'vitest';
import { testRequires } from './test-require.js';

/** Where tests put screenshots; git-ignored, kept for looking at failures. */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** Longest one browser step (a click, a wait for an element) may take: well under the test timeout. */
const STEP_TIMEOUT_MS = 15_000;

/** Names looked for on PATH, in this order, when CHROMIUM_PATH is not set. */
export const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome'] as const;

/** Whether the browser tests run (and with which binary), are skipped, or fail for want of a browser. */
export type BrowserTestPlan =
  | { action: 'run'; executablePath: string }
  | { action: 'skip' | 'fail'; reason: string };

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * CHROMIUM_PATH if set (a wrong one fails: whoever set it wants the browser tests), else the first of
 * CHROMIUM_NAMES on PATH. Without either the browser tests are skipped, unless HOOKRELAY_TEST_REQUIRE
 * lists chromium.
 */
export function planBrowserTests(env: Record<string, string | undefined>, isExecutable: (path: string) => boolean = isExecutableFile): BrowserTestPlan {
  const configured = env.CHROMIUM_PATH;
  if (configured) {
    return isExecutable(configured)
      ? { action: 'run', executablePath: configured }
      : { action: 'fail', reason: `CHROMIUM_PATH=${configured} is not an executable file` };
  }
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of CHROMIUM_NAMES) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return { action: 'run', executablePath: candidate };
    }
  }
  const reason = `no Chromium found (CHROMIUM_PATH is not set and none of ${CHROMIUM_NAMES.join(', ')} is on PATH)`;
  return testRequires('chromium', env)
    ? { action: 'fail', reason: `${reason}, and HOOKRELAY_TEST_REQUIRE lists chromium` }
    : { action: 'skip', reason };
}

const plan = planBrowserTests(process.env);

/**
 * `describe` for tests that drive a browser: where none is found they are skipped with the reason in
 * the suite's title and a line on stderr, so the rest of the suite still runs; where one is required
 * (see planBrowserTests) they fail with the reason instead.
 */
export function describeWithBrowser(title: string, body: () => void, options: { timeout?: number } = {}): void {
  if (plan.action === 'fail') {
    const { reason } = plan;
    describe(title, () => {
      it('has a Chromium to drive', () => {
        throw new Error(reason);
      });
    });
    return;
  }
  if (plan.action === 'skip') console.warn(`Skipped "${title}": ${plan.reason}. Install Chromium or set CHROMIUM_PATH to run it.`);
  describe.skipIf(plan.action === 'skip')(plan.action === 'skip' ? `${title} (skipped: no Chromium found; set CHROMIUM_PATH)` : title, options, body);
}

/**
 * Headless Chromium as planBrowserTests found it. The flags keep the browser from calling home: no
 * background networking, component updates, sync or first-run pages.
 */
export async function launchBrowser(): Promise<Browser> {
  if (plan.action !== 'run') throw new Error(plan.reason);
  const browser = await chromium.launch({
    executablePath: plan.executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  // A step that waits in vain fails with what it waited for (the locator, the URL) instead of running into
  // the test's own 30 s timeout, which names nothing.
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (options) => {
    const page = await newPage(options);
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    return page;
  };
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    return context;
  };
  return browser;
}

/** Saves a full-page screenshot as test-artifacts/<name>.png and returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = `${ARTIFACTS_DIR}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Opens the console at `url` and logs in with the admin token; resolves on the events page. */
export async function logInToConsole(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/console`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Events' }).waitFor();
}
