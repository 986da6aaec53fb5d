import { type ComponentChildren } from 'preact';

export interface Column<T> {
  /** Stable id; also the sort key sent to the API when `sortable`. */
  key: string;
  header: string;
  render: (row: T) => ComponentChildren;
  sortable?: boolean;
  /** Header text kept for screen readers only (an actions column). */
  hiddenHeader?: boolean;
}

export interface Sort {
  by: string;
  descending: boolean;
}

/**
 * A table of rows with optional sortable columns. Sorting is the caller's (a server-side
 * order or a local one); the header says which column sorts and which way (aria-sort).
 * On a narrow screen each row stands as a card of labelled cells (styles.css, "Tables"),
 * so no column is cut off; the sortable headers stay as a row of buttons above them.
 */
export function DataTable<T>(props: {
  caption: string;
  columns: Column<T>[];
  rows: T[] | undefined;
  rowKey: (row: T) => string | number;
  loading?: boolean;
  empty?: ComponentChildren;
  sort?: Sort;
  onSort?: (sort: Sort) => void;
}) {
  const { sort, onSort } = props;
  return (
    // Focusable, so a keyboard can scroll a table wider than a phone's screen.
    <div class="table-scroll" tabIndex={0} role="region" aria-label={props.caption}>
      <table class="data-table" aria-busy={props.loading ? 'true' : undefined}>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => {
              const sorted = sort?.by === column.key;
              return (
                <th
                  key={column.key}
                  scope="col"
                  aria-sort={sorted ? (sort?.descending ? 'descending' : 'ascending') : undefined}
                >
                  {column.hiddenHeader ? (
                    <span class="visually-hidden">{column.header}</span>
                  ) : column.sortable && onSort ? (
                    <button
                      type="button"
                      class="sort"
                      onClick={() =>
                        onSort({
                          by: column.key,
                          descending: sorted ? !sort?.descending : false,
                        })
                      }
                    >
                      {column.header}
                      <span aria-hidden="true">
                        {sorted ? (sort?.descending ? ' ▼' : ' ▲') : ' ↕'}
                      </span>
                    </button>
                  ) : (
                    column.header
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {props.rows === undefined && props.loading && (
            <tr>
              <td colSpan={props.columns.length} class="table-state">
                Loading…
              </td>
            </tr>
          )}
          {props.rows?.length === 0 && (
            <tr>
              <td colSpan={props.columns.length} class="table-state">
                {props.empty ?? 'Nothing here yet.'}
              </td>
            </tr>
          )}
          {props.rows?.map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((column) => (
                <td key={column.key} data-label={column.hiddenHeader ? undefined : column.header}>
                  <div class="cell">{column.render(row)}</div>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Sorts rows in the browser by a column's value (for lists the API does not order). */
export function sortRows<T>(
  rows: T[] | undefined,
  sort: Sort,
  value: (row: T, key: string) => unknown,
): T[] | undefined {
  if (!rows) return rows;
  const direction = sort.descending ? -1 : 1;
  return [...rows].sort((a, b) => {
    const left = value(a, sort.by);
    const right = value(b, sort.by);
    if (left === right) return 0;
    if (left === null || left === undefined) return 1;
    if (right === null || right === undefined) return -1;
    return (left < right ? -1 : 1) * direction;
  });
}

/** Previous / next through a paged list; the count is announced when it changes. */
export function Pager(props: {
  /** What is counted, in the plural ("users"). */
  label: string;
  /** The same for one, when it is not the plural ("user"). */
  one?: string;
  page: number;
  pageSize: number;
  total: number;
  onPage: (page: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(props.total / props.pageSize));
  return (
    <nav class="pager" aria-label={`Pages of ${props.label}`}>
      <button
        type="button"
        class="secondary"
        disabled={props.page <= 1}
        onClick={() => props.onPage(props.page - 1)}
      >
        Previous
      </button>
      <span aria-live="polite">
        Page {props.page} of {pages} ({props.total}{' '}
        {props.total === 1 && props.one ? props.one : props.label})
      </span>
      <button
        type="button"
        class="secondary"
        disabled={props.page >= pages}
        onClick={() => props.onPage(props.page + 1)}
      >
        Next
      </button>
    </nav>
  );
}
