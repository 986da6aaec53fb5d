import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { repositoryRoot } from '@switchyard/testing';
import type { Page } from 'playwright-core';

// What every browser suite needs: Debian's Chromium, screenshots a person can look at, and
// axe-core's verdict on a page.

export const CHROMIUM = '/usr/bin/chromium';

const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

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
