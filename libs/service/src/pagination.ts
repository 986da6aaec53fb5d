// Lists and their pages. What a page looks like in OpenAPI, and its query's validation, are
// in page-dto.ts (behind `@switchyard/service/openapi`, so apps without an HTTP API of their
// own, like the edge, do not load @nestjs/swagger).

/** Every list answers `{items, total}` (docs/specification.md, "Lists"). */
export interface Page<T> {
  items: T[];
  total: number;
}

/** Which page of a list is asked for. */
export interface PageWindow {
  page: number;
  pageSize: number;
}

export interface PageSizes {
  /** The page size when the query names none. */
  pageSize: number;
  /** The largest page size a query may ask for. */
  maxPageSize: number;
}

export function skipTake(query: PageWindow): { skip: number; take: number } {
  return { skip: (query.page - 1) * query.pageSize, take: query.pageSize };
}

/** A whole list as one page: for lists an administrator curates, which stay short. */
export function wholeList<T>(items: T[]): Page<T> {
  return { items, total: items.length };
}
