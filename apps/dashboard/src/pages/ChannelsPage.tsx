import {
  ConfirmDialog,
  DataTable,
  Dialog,
  Pager,
  ProblemNotice,
  RowButton,
  SelectField,
  TextField,
  useAction,
  useLoad,
  useToast,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { ChannelForm } from '../components/ChannelForm.js';
import { count, money } from '../format.js';
import { useCanEdit } from '../me.js';

type Channel = Schemas['ChannelResponse'];
type Status = Schemas['ChannelStatus'];
const PAGE_SIZE = 20;

interface Filters {
  name: string;
  status: '' | Status;
  group: string;
  model: string;
}
const NO_FILTERS: Filters = { name: '', status: '', group: '', model: '' };

export function ChannelsPage() {
  const canEdit = useCanEdit();
  const notify = useToast();
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [page, setPage] = useState(1);
  const channels = useLoad(
    () =>
      call(
        api.GET('/api/channels', {
          params: {
            query: {
              page,
              pageSize: PAGE_SIZE,
              ...(filters.name ? { name: filters.name } : {}),
              ...(filters.status ? { status: filters.status } : {}),
              ...(filters.group ? { group: filters.group } : {}),
              ...(filters.model ? { model: filters.model } : {}),
            },
          },
        }),
      ),
    [filters, page],
  );
  const [editing, setEditing] = useState<Channel | 'new' | null>(null);
  const [importing, setImporting] = useState(false);
  const [deleting, setDeleting] = useState<Channel | null>(null);
  const [tests, setTests] = useState<Record<number, Schemas['ChannelTestResult'] | 'running'>>({});
  const { act, error, setError } = useAction(channels.reload);

  const test = async (channel: Channel) => {
    setTests((shown) => ({ ...shown, [channel.id]: 'running' }));
    try {
      const result = await call(
        api.POST('/api/channels/{id}/test', { params: { path: { id: channel.id } }, body: {} }),
      );
      setTests((shown) => ({ ...shown, [channel.id]: result }));
    } catch (failure) {
      setTests((shown) => {
        const { [channel.id]: _dropped, ...rest } = shown;
        return rest;
      });
      setError(failure);
    }
  };

  const testAll = async () => {
    for (const channel of channels.data?.items ?? []) await test(channel);
  };

  return (
    <section aria-labelledby="channels-title">
      <div class="page-header">
        <h1 id="channels-title">Channels</h1>
        {canEdit && (
          <div class="form-actions">
            <button type="button" onClick={() => setEditing('new')}>
              Add channel
            </button>
            <button type="button" class="secondary" onClick={() => setImporting(true)}>
              Bulk import
            </button>
            <button type="button" class="secondary" onClick={() => void testAll()}>
              Test all on this page
            </button>
          </div>
        )}
      </div>
      <form
        class="toolbar"
        role="search"
        aria-label="Filter channels"
        onSubmit={(event) => {
          event.preventDefault();
          setPage(1);
          setFilters({
            ...draft,
            name: draft.name.trim(),
            group: draft.group.trim(),
            model: draft.model.trim(),
          });
        }}
      >
        <TextField
          label="Name contains"
          type="search"
          value={draft.name}
          onInput={(name) => setDraft({ ...draft, name })}
        />
        <SelectField
          label="Status"
          value={draft.status}
          onChange={(status) => setDraft({ ...draft, status: status as Filters['status'] })}
          options={[
            { value: '', label: 'Any' },
            { value: 'enabled', label: 'Enabled' },
            { value: 'disabled', label: 'Disabled' },
            { value: 'auto_disabled', label: 'Automatically disabled' },
          ]}
        />
        <TextField
          label="Group"
          value={draft.group}
          onInput={(group) => setDraft({ ...draft, group })}
        />
        <TextField
          label="Serves model"
          value={draft.model}
          onInput={(model) => setDraft({ ...draft, model })}
        />
        <button type="submit">Filter</button>
      </form>
      <ProblemNotice
        error={error ?? channels.error}
        explain={explain}
        onDismiss={error ? () => setError(null) : undefined}
      />
      <DataTable
        caption={`Channels (${channels.data?.total ?? 0})`}
        rows={channels.data?.items}
        rowKey={(channel) => channel.id}
        loading={channels.loading}
        empty={canEdit ? 'No channels match. Add one to start routing.' : 'No channels match.'}
        columns={[
          {
            key: 'name',
            header: 'Channel',
            render: (channel) => (
              <>
                <strong>{channel.name}</strong>
                <div class="muted">
                  {channel.kind} · <code>{channel.baseUrl}</code>
                </div>
                <div class="muted">groups: {channel.groups.join(', ')}</div>
              </>
            ),
          },
          {
            key: 'status',
            header: 'Status',
            render: (channel) => (
              <StatusBadge status={channel.status} reason={channel.statusReason} />
            ),
          },
          {
            key: 'keys',
            header: 'Keys',
            render: (channel) => (
              <ul class="key-list">
                {channel.keys.map((key) => (
                  <li key={key.id}>
                    <code>…{key.lastFour}</code>{' '}
                    <StatusBadge status={key.status} reason={key.statusReason} />
                    {(key.limits.rpm ?? key.limits.tpm ?? key.limits.concurrency) !== null && (
                      <span class="muted"> {limitsText(key.limits)}</span>
                    )}
                  </li>
                ))}
              </ul>
            ),
          },
          {
            key: 'models',
            header: 'Models',
            render: (channel) => (
              <span>
                {channel.models.slice(0, 6).join(', ')}
                {channel.models.length > 6 ? ` and ${channel.models.length - 6} more` : ''}
              </span>
            ),
          },
          {
            key: 'priority',
            header: 'Priority / weight',
            render: (channel) => `${channel.priority} / ${channel.weight}`,
          },
          {
            key: 'used',
            header: 'Used',
            render: (channel) => (
              <>
                {money(channel.usedQuota)}
                <div class="muted">{count(channel.requestCount)} requests</div>
              </>
            ),
          },
          {
            key: 'test',
            header: 'Last test',
            render: (channel) => <TestResult result={tests[channel.id]} />,
          },
          ...(canEdit
            ? [
                {
                  key: 'actions',
                  header: 'Actions',
                  hiddenHeader: true,
                  render: (channel: Channel) => (
                    <div class="row-actions">
                      <RowButton
                        action="Test"
                        row={channel.name}
                        onClick={() => void test(channel)}
                      />
                      <RowButton
                        action="Edit"
                        row={channel.name}
                        onClick={() => setEditing(channel)}
                      />
                      {channel.status === 'enabled' ? (
                        <RowButton
                          action="Disable"
                          row={channel.name}
                          onClick={() =>
                            void act(
                              () =>
                                call(
                                  api.POST('/api/channels/{id}/disable', {
                                    params: { path: { id: channel.id } },
                                    body: {},
                                  }),
                                ),
                              `${channel.name} disabled.`,
                            )
                          }
                        />
                      ) : (
                        <RowButton
                          action="Enable"
                          row={channel.name}
                          onClick={() =>
                            void act(
                              () =>
                                call(
                                  api.POST('/api/channels/{id}/enable', {
                                    params: { path: { id: channel.id } },
                                  }),
                                ),
                              `${channel.name} enabled.`,
                            )
                          }
                        />
                      )}
                      <RowButton
                        action="Delete"
                        row={channel.name}
                        onClick={() => setDeleting(channel)}
                        danger
                      />
                    </div>
                  ),
                },
              ]
            : []),
        ]}
      />
      <Pager
        label="channels"
        one="channel"
        page={page}
        pageSize={PAGE_SIZE}
        total={channels.data?.total ?? 0}
        onPage={setPage}
      />
      {editing && (
        <ChannelForm
          channel={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={async (saved) => {
            notify(`Channel ${saved.name} saved.`);
            setEditing(null);
            await channels.reload();
          }}
        />
      )}
      {importing && (
        <ImportDialog
          onClose={() => setImporting(false)}
          onImported={async (total) => {
            notify(`${total} channels imported.`);
            setImporting(false);
            await channels.reload();
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.name}?`}
          message="The channel and its keys are removed; requests stop going to it at once."
          confirm="Delete channel"
          onCancel={() => setDeleting(null)}
          onConfirm={() => {
            const target = deleting;
            setDeleting(null);
            void act(
              () => call(api.DELETE('/api/channels/{id}', { params: { path: { id: target.id } } })),
              `${target.name} deleted.`,
            );
          }}
        />
      )}
    </section>
  );
}

const STATUS_TEXT: Record<Status, { text: string; tone: string }> = {
  enabled: { text: 'Enabled', tone: 'good' },
  disabled: { text: 'Disabled', tone: 'warn' },
  auto_disabled: { text: 'Automatically disabled', tone: 'bad' },
};

function StatusBadge(props: { status: Status; reason: string | null }) {
  const shown = STATUS_TEXT[props.status];
  return (
    <>
      <span class={`badge badge-${shown.tone}`}>{shown.text}</span>
      {props.reason && <span class="muted"> {props.reason}</span>}
    </>
  );
}

function limitsText(limits: Schemas['LimitsResponse']): string {
  return [
    limits.rpm !== null ? `${limits.rpm} rpm` : '',
    limits.tpm !== null ? `${limits.tpm} tpm` : '',
    limits.concurrency !== null ? `${limits.concurrency} at once` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

function TestResult(props: { result: Schemas['ChannelTestResult'] | 'running' | undefined }) {
  const { result } = props;
  if (result === undefined) return <span class="muted">—</span>;
  if (result === 'running') return <span role="status">Testing…</span>;
  return result.ok ? (
    <span role="status">
      <span class="badge badge-good">OK</span> {result.latencyMs} ms
    </span>
  ) : (
    <span role="status">
      <span class="badge badge-bad">Failed</span> {result.status ?? 'no answer'}, {result.latencyMs}{' '}
      ms: {result.error?.message}
    </span>
  );
}

function ImportDialog(props: {
  onClose: () => void;
  onImported: (total: number) => Promise<void>;
}) {
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    let body: Schemas['CreateChannelDto'][];
    try {
      body = JSON.parse(text) as Schemas['CreateChannelDto'][];
    } catch (failure) {
      setError({ code: 'invalid_json', message: `Not JSON: ${(failure as Error).message}` });
      return;
    }
    setBusy(true);
    try {
      const answer = await call(api.POST('/api/channels/import', { body }));
      await props.onImported(answer.total);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title="Bulk import channels" onClose={props.onClose}>
      <form class="editor" onSubmit={(event) => void submit(event)}>
        <ProblemNotice error={error} explain={explain} />
        <TextField
          label="Channels as a JSON array"
          multiline
          rows={10}
          value={text}
          onInput={setText}
          hint='Each item like {"name", "kind", "baseUrl", "keys": [...], "models": [...]}. All or nothing.'
        />
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            Import
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
