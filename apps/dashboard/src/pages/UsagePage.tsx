import {
  DataTable,
  Dialog,
  Pager,
  ProblemNotice,
  SelectField,
  TextField,
  useLoad,
  useToast,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { useTeamOptions } from '../components/teamOptions.js';
import { count, download, money, when } from '../format.js';

type Log = Schemas['UsageLogResponse'];
const PAGE_SIZE = 50;
/** A CSV export reads at most this many rows (pages of 100). */
const EXPORT_LIMIT = 10_000;

interface Filters {
  from: string;
  to: string;
  tokenId: string;
  channelId: string;
  teamId: string;
  model: string;
  status: string;
}
const NO_FILTERS: Filters = {
  from: '',
  to: '',
  tokenId: '',
  channelId: '',
  teamId: '',
  model: '',
  status: '',
};

function queryOf(filters: Filters) {
  return {
    ...(filters.from ? { from: new Date(filters.from).toISOString() } : {}),
    ...(filters.to ? { to: new Date(filters.to).toISOString() } : {}),
    ...(filters.tokenId ? { tokenId: Number(filters.tokenId) } : {}),
    ...(filters.channelId ? { channelId: Number(filters.channelId) } : {}),
    ...(filters.teamId ? { teamId: Number(filters.teamId) } : {}),
    ...(filters.model ? { model: filters.model } : {}),
    ...(filters.status ? { status: Number(filters.status) } : {}),
  };
}

const CSV_COLUMNS: (keyof Log)[] = [
  'requestedAt',
  'requestId',
  'tokenName',
  'channelName',
  'requestedModel',
  'model',
  'upstreamModel',
  'status',
  'errorCode',
  'promptTokens',
  'completionTokens',
  'cost',
  'latencyMs',
  'firstByteMs',
  'attempts',
  'stream',
  'clientIp',
];

function csvCell(value: string | number | boolean | null | undefined): string {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function UsagePage() {
  const notify = useToast();
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [page, setPage] = useState(1);
  const logs = useLoad(
    () =>
      call(
        api.GET('/api/usage/logs', {
          params: { query: { page, pageSize: PAGE_SIZE, ...queryOf(filters) } },
        }),
      ),
    [filters, page],
  );
  const tokens = useLoad(
    () => call(api.GET('/api/tokens', { params: { query: { pageSize: 100 } } })),
    [],
  );
  const channels = useLoad(
    () => call(api.GET('/api/channels', { params: { query: { pageSize: 100 } } })),
    [],
  );
  const teams = useTeamOptions('Any');
  const [detail, setDetail] = useState<Log | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [exporting, setExporting] = useState(false);

  const exportCsv = async () => {
    setExporting(true);
    setError(null);
    try {
      const rows: Log[] = [];
      for (let next = 1; rows.length < EXPORT_LIMIT; next += 1) {
        const answer = await call(
          api.GET('/api/usage/logs', {
            params: { query: { page: next, pageSize: 100, ...queryOf(filters) } },
          }),
        );
        rows.push(...answer.items);
        if (answer.items.length < 100 || rows.length >= answer.total) break;
      }
      const lines = [
        CSV_COLUMNS.join(','),
        ...rows.map((row) => CSV_COLUMNS.map((c) => csvCell(row[c])).join(',')),
      ];
      download('usage.csv', 'text/csv', `${lines.join('\n')}\n`);
      notify(`${rows.length} requests exported.`);
    } catch (failure) {
      setError(failure);
    } finally {
      setExporting(false);
    }
  };

  const set = (field: keyof Filters) => (value: string) => setDraft({ ...draft, [field]: value });

  return (
    <section aria-labelledby="usage-title">
      <div class="page-header">
        <h1 id="usage-title">Usage</h1>
        <button
          type="button"
          class="secondary"
          disabled={exporting}
          onClick={() => void exportCsv()}
        >
          Export CSV
        </button>
      </div>
      <form
        class="toolbar"
        role="search"
        aria-label="Filter requests"
        onSubmit={(event) => {
          event.preventDefault();
          setPage(1);
          setFilters({ ...draft, model: draft.model.trim() });
        }}
      >
        <TextField label="From" type="datetime-local" value={draft.from} onInput={set('from')} />
        <TextField label="To" type="datetime-local" value={draft.to} onInput={set('to')} />
        <SelectField
          label="Token"
          value={draft.tokenId}
          onChange={set('tokenId')}
          options={[
            { value: '', label: 'Any' },
            ...(tokens.data?.items ?? []).map((token) => ({
              value: String(token.id),
              label: token.name,
            })),
          ]}
        />
        <SelectField
          label="Channel"
          value={draft.channelId}
          onChange={set('channelId')}
          options={[
            { value: '', label: 'Any' },
            ...(channels.data?.items ?? []).map((channel) => ({
              value: String(channel.id),
              label: channel.name,
            })),
          ]}
        />
        <SelectField label="Team" value={draft.teamId} onChange={set('teamId')} options={teams} />
        <TextField label="Model" value={draft.model} onInput={set('model')} />
        <TextField
          label="Status"
          type="number"
          value={draft.status}
          onInput={set('status')}
          placeholder="e.g. 429"
        />
        <button type="submit">Filter</button>
      </form>
      <ProblemNotice error={error ?? logs.error} explain={explain} />
      <DataTable
        caption={`Requests (${(logs.data?.total ?? 0).toLocaleString('en')}${logs.data?.totalCapped ? '+' : ''})`}
        rows={logs.data?.items}
        rowKey={(log) => log.id}
        loading={logs.loading}
        empty="No requests match."
        columns={[
          { key: 'time', header: 'Time', render: (log) => when(log.requestedAt) },
          { key: 'token', header: 'Token', render: (log) => log.tokenName ?? '—' },
          { key: 'model', header: 'Model', render: (log) => log.model },
          { key: 'channel', header: 'Channel', render: (log) => log.channelName ?? '—' },
          {
            key: 'status',
            header: 'Status',
            render: (log) => (
              <span class={`badge badge-${log.status < 400 ? 'good' : 'bad'}`}>
                {log.status}
                {log.errorCode ? ` ${log.errorCode}` : ''}
              </span>
            ),
          },
          {
            key: 'tokens',
            header: 'Tokens in / out',
            render: (log) => `${count(log.promptTokens)} / ${count(log.completionTokens)}`,
          },
          { key: 'cost', header: 'Cost', render: (log) => money(log.cost) },
          { key: 'latency', header: 'Latency', render: (log) => `${log.latencyMs} ms` },
          {
            key: 'detail',
            header: 'Detail',
            hiddenHeader: true,
            render: (log) => (
              <button type="button" class="link-button" onClick={() => setDetail(log)}>
                Details<span class="visually-hidden"> of request {log.requestId}</span>
              </button>
            ),
          },
        ]}
      />
      <Pager
        label="requests"
        one="request"
        page={page}
        pageSize={PAGE_SIZE}
        total={logs.data?.total ?? 0}
        onPage={setPage}
      />
      {detail && <RequestDetail log={detail} onClose={() => setDetail(null)} />}
    </section>
  );
}

function RequestDetail(props: { log: Log; onClose: () => void }) {
  const { log } = props;
  const rows: [string, string][] = [
    ['Request id', log.requestId],
    ['Time', when(log.requestedAt)],
    ['Endpoint', log.endpoint],
    ['Token', log.tokenName ?? '—'],
    ['Model asked for', log.requestedModel ?? log.model],
    ...(log.requestedModel !== null
      ? ([['Model that served', `${log.model} (a fallback)`]] as [string, string][])
      : []),
    ['Model sent upstream', log.upstreamModel ?? '—'],
    ['Channel', log.channelName ? `${log.channelName} (key #${log.channelKeyId ?? '—'})` : '—'],
    ['Attempts', `${log.attempts}${log.attempts > 1 ? ' (failed over to the channel above)' : ''}`],
    ['Status', `${log.status}${log.errorCode ? ` (${log.errorCode})` : ''}`],
    ['Latency', `${log.latencyMs} ms`],
    ['Time to first token', log.firstByteMs === null ? '—' : `${log.firstByteMs} ms`],
    ['Streamed', log.stream ? 'yes' : 'no'],
    [
      'Tokens in / out',
      `${log.promptTokens} / ${log.completionTokens}${log.tokensCounted ? ' (counted by the gateway)' : ''}`,
    ],
    ['Cost', money(log.cost)],
    ['Client address', log.clientIp ?? '—'],
  ];
  return (
    <Dialog title="Request detail" onClose={props.onClose}>
      <dl class="details">
        {rows.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <div class="form-actions">
        <button type="button" class="secondary" onClick={props.onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
