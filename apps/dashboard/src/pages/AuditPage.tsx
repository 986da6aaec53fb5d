import { DataTable, Pager, ProblemNotice, TextField, useLoad } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain } from '../api/client.js';
import { when } from '../format.js';

const PAGE_SIZE = 50;

export function AuditPage() {
  const [draft, setDraft] = useState({ action: '', targetType: '' });
  const [filters, setFilters] = useState(draft);
  const [page, setPage] = useState(1);
  const entries = useLoad(
    () =>
      call(
        api.GET('/api/audit', {
          params: {
            query: {
              page,
              pageSize: PAGE_SIZE,
              ...(filters.action ? { action: filters.action } : {}),
              ...(filters.targetType ? { targetType: filters.targetType } : {}),
            },
          },
        }),
      ),
    [filters, page],
  );
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <form
        class="toolbar"
        role="search"
        aria-label="Filter the audit log"
        onSubmit={(event) => {
          event.preventDefault();
          setPage(1);
          setFilters({ action: draft.action.trim(), targetType: draft.targetType.trim() });
        }}
      >
        <TextField
          label="Action"
          value={draft.action}
          placeholder="e.g. channel.update"
          onInput={(action) => setDraft({ ...draft, action })}
        />
        <TextField
          label="Target type"
          value={draft.targetType}
          placeholder="e.g. token"
          onInput={(targetType) => setDraft({ ...draft, targetType })}
        />
        <button type="submit">Filter</button>
      </form>
      <ProblemNotice error={entries.error} explain={explain} />
      <DataTable
        caption={`Audit entries (${entries.data?.total ?? 0})`}
        rows={entries.data?.items}
        rowKey={(entry) => entry.id}
        loading={entries.loading}
        empty="Nothing recorded yet."
        columns={[
          { key: 'time', header: 'Time', render: (entry) => when(entry.createdAt) },
          { key: 'actor', header: 'Who', render: (entry) => entry.actorName },
          { key: 'action', header: 'Action', render: (entry) => <code>{entry.action}</code> },
          {
            key: 'target',
            header: 'Target',
            render: (entry) => `${entry.targetType}${entry.targetId ? ` #${entry.targetId}` : ''}`,
          },
          {
            key: 'details',
            header: 'Details',
            render: (entry) => (entry.details ? <code>{JSON.stringify(entry.details)}</code> : '—'),
          },
          { key: 'ip', header: 'From', render: (entry) => entry.clientIp ?? '—' },
        ]}
      />
      <Pager
        label="entries"
        one="entry"
        page={page}
        pageSize={PAGE_SIZE}
        total={entries.data?.total ?? 0}
        onPage={setPage}
      />
    </section>
  );
}
