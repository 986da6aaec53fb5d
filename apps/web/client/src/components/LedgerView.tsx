import { DataTable, Pager, SelectField, useLoad, type Column } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { CREDIT_KINDS, type CreditEntry, type CreditKind, type Ledger } from '../api/types.js';
import { ErrorNotice } from './ErrorNotice.js';

const PAGE_SIZE = 20;

const signed = (amount: number) => (amount > 0 ? `+${amount}` : String(amount));

const COLUMNS: Column<CreditEntry>[] = [
  { key: 'when', header: 'When', render: (entry) => new Date(entry.createdAt).toLocaleString() },
  { key: 'kind', header: 'Kind', render: (entry) => entry.kind },
  { key: 'amount', header: 'Credits', render: (entry) => signed(entry.amount) },
  { key: 'balanceAfter', header: 'Balance after', render: (entry) => entry.balanceAfter },
  { key: 'reason', header: 'Reason', render: (entry) => entry.reason },
];

/**
 * A ledger, newest first, a page at a time, filtered by kind. `load` reads the signed-in
 * user's own ledger or, for an administrator, a chosen user's; `version` reloads it.
 */
export function LedgerView(props: {
  caption: string;
  load: (page: number, pageSize: number, kind?: CreditKind) => Promise<Ledger>;
  version?: number;
}) {
  const [kind, setKind] = useState<CreditKind | ''>('');
  const [page, setPage] = useState(1);
  const entries = useLoad(
    () => props.load(page, PAGE_SIZE, kind === '' ? undefined : kind),
    [page, kind, props.version ?? 0],
  );
  return (
    <div class="ledger">
      <SelectField
        label="Show"
        value={kind}
        options={[
          { value: '', label: 'Every kind' },
          ...CREDIT_KINDS.map((value) => ({ value, label: value })),
        ]}
        onChange={(value) => {
          setPage(1);
          setKind(value as CreditKind | '');
        }}
      />
      <ErrorNotice error={entries.error} />
      <DataTable
        caption={`${props.caption} (${entries.data?.total ?? 0})`}
        columns={COLUMNS}
        rows={entries.data?.items}
        rowKey={(entry) => entry.id}
        loading={entries.loading}
        empty="No entries."
      />
      <Pager
        label="ledger entries"
        one="entry"
        page={page}
        pageSize={PAGE_SIZE}
        total={entries.data?.total ?? 0}
        onPage={setPage}
      />
    </div>
  );
}
