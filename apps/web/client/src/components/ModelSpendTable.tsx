import { DataTable, type Column } from '@switchyard/ui';
import { type CreditModelSpend } from '../api/types.js';
import { count } from './UsageView.js';

// Credits spent per model as a bar chart that is a table (docs/credits.md, "Overview" and
// "Pages"): each row's bar only repeats its share column, so the numbers a screen reader
// reads are the ones the bars draw. The admin overview and the user's Credits page use it.

const NOT_RECORDED = 'Not recorded (older replies)';

function modelColumns(total: number): Column<CreditModelSpend>[] {
  const share = (row: CreditModelSpend) =>
    total > 0 ? Math.round((Math.max(row.spent, 0) / total) * 100) : 0;
  return [
    { key: 'model', header: 'Model', render: (row) => row.model ?? NOT_RECORDED },
    { key: 'spent', header: 'Credits spent', render: (row) => count(row.spent) },
    {
      key: 'share',
      header: 'Share',
      render: (row) => (
        <span class="credit-share">
          <span
            class="credit-bar"
            aria-hidden="true"
            style={{ width: `${(share(row) * 6) / 100}rem` }}
          />
          {share(row)}%
        </span>
      ),
    },
  ];
}

export function ModelSpendTable(props: {
  caption: string;
  models: CreditModelSpend[] | undefined;
  loading: boolean;
  empty: string;
}) {
  const total = props.models?.reduce((sum, row) => sum + Math.max(row.spent, 0), 0) ?? 0;
  return (
    <DataTable
      caption={props.caption}
      columns={modelColumns(total)}
      rows={props.models}
      rowKey={(row) => row.model ?? ''}
      loading={props.loading}
      empty={props.empty}
    />
  );
}
