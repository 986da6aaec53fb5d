import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { repositoryRoot } from '@switchyard/testing';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';

// What every browser suite needs: Debian's Chromium, screenshots a person can look at, and
// axe-core's verdict on a page.

export const CHROMIUM = '/usr/bin/chromium';

const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

/**
 * The bound of one browser action (a click, a navigation, an element awaited, files handed
 * to an input): Playwright's own 30 s ran out on a busy machine for a 6 MB file
 * (docs/architecture.md, "Waiting in tests"). An action ends as soon as it is done; this
 * only decides how long a hang takes to fail, inside the test's own timeout.
 */
export const BROWSER_ACTION_TIMEOUT_MS = 60_000;

/** A context of the suite's own, its actions bounded by BROWSER_ACTION_TIMEOUT_MS. */
export async function newContext(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(BROWSER_ACTION_TIMEOUT_MS);
  return context;
}

/** A page in a context of its own (closed with the browser connection, as `browser.newPage`'s). */
export async function newPage(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<Page> {
  return (await newContext(browser, options)).newPage();
}

/** Where a suite's screenshots go (test/output is not committed). */
export function screenshotFolder(suite: string): string {
  const folder = path.join(
    process.env.TEST_OUTPUT_DIR ?? path.join(repositoryRoot, 'test', 'output'),
    suite,
  );
  mkdirSync(folder, { recursive: true });
  return folder;
}

export async function screenshot(page: Page, folder: string, name: string): Promise<void> {
  await page.screenshot({ path: path.join(folder, `${name}.png`), fullPage: true });
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core's serious and critical findings on the page as it is now. It is evaluated
 * through the DevTools protocol, so a page whose content security policy refuses inline
 * scripts is checked too.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  // Evaluated in the page (the test itself has no DOM types).
  const violations = await page.evaluate<AxeViolation[]>(
    '(globalThis.axe).run().then((result) => result.violations)',
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}) ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`,
    );
}
