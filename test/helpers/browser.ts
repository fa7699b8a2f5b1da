import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Where tests put screenshots; git-ignored, kept for looking at failures. */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** Longest one browser step (a click, a wait for an element) may take: well under the test timeout. */
const STEP_TIMEOUT_MS = 15_000;

/**
 * Headless Chromium from the system (set CHROMIUM_PATH to use another binary). The flags keep the
 * browser from calling home: no background networking, component updates, sync or first-run pages.
 */
export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
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
