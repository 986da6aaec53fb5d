import { type Page } from 'playwright-core';

/**
 * The page, its body and every scroll container, table or chart in it that is wider than
 * it shows (as `TAG.class`): at a phone's width, something out of reach.
 */
export function overflowingElements(page: Page): Promise<string[]> {
  // Evaluated in the page; the test itself has no DOM types.
  return page.evaluate<string[]>(`[
    document.documentElement,
    document.body,
    ...document.querySelectorAll('main, .table-scroll, table, .chart'),
  ]
    .filter((element) => element.scrollWidth > element.clientWidth + 1)
    .map((element) => element.tagName + '.' + element.className)`);
}
