import {
  ConfirmDialog,
  DataTable,
  Pager,
  ProblemNotice,
  RowButton,
  SelectField,
  Switch,
  TextField,
  useAction,
  useLoad,
  useToast,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { CreatedTokens, TokenForm, type Created } from '../components/TokenForm.js';
import { money, when } from '../format.js';
import { useCanEdit } from '../me.js';

type Token = Schemas['TokenResponse'];
type Status = Token['status'];
const PAGE_SIZE = 20;

const STATUS_TEXT: Record<Status, { text: string; tone: string }> = {
  enabled: { text: 'Enabled', tone: 'good' },
  disabled: { text: 'Disabled', tone: 'warn' },
  exhausted: { text: 'Quota used up', tone: 'bad' },
  expired: { text: 'Expired', tone: 'bad' },
};

export function TokensPage() {
  const canEdit = useCanEdit();
  const notify = useToast();
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<'' | Status>('');
  const [filters, setFilters] = useState<{ name: string; status: '' | Status }>({
    name: '',
    status: '',
  });
  const [page, setPage] = useState(1);
  const tokens = useLoad(
    () =>
      call(
        api.GET('/api/tokens', {
          params: {
            query: {
              page,
              pageSize: PAGE_SIZE,
              ...(filters.name ? { name: filters.name } : {}),
              ...(filters.status ? { status: filters.status } : {}),
            },
          },
        }),
      ),
    [filters, page],
  );
  const [editing, setEditing] = useState<Token | 'new' | null>(null);
  const [created, setCreated] = useState<Created | null>(null);
  const [deleting, setDeleting] = useState<Token | null>(null);
  const { act, error } = useAction(tokens.reload);

  return (
    <section aria-labelledby="tokens-title">
      <div class="page-header">
        <h1 id="tokens-title">Tokens</h1>
        {canEdit && (
          <button type="button" onClick={() => setEditing('new')}>
            Create token
          </button>
        )}
      </div>
      <form
        class="toolbar"
        role="search"
        aria-label="Filter tokens"
        onSubmit={(event) => {
          event.preventDefault();
          setPage(1);
          setFilters({ name: search.trim(), status });
        }}
      >
        <TextField label="Name contains" type="search" value={search} onInput={setSearch} />
        <SelectField
          label="Status"
          value={status}
          onChange={(value) => setStatus(value as '' | Status)}
          options={[
            { value: '', label: 'Any' },
            ...Object.entries(STATUS_TEXT).map(([value, shown]) => ({ value, label: shown.text })),
          ]}
        />
        <button type="submit">Filter</button>
      </form>
      <ProblemNotice error={error ?? tokens.error} explain={explain} />
      <DataTable
        caption={`Tokens (${tokens.data?.total ?? 0})`}
        rows={tokens.data?.items}
        rowKey={(token) => token.id}
        loading={tokens.loading}
        empty="No tokens match."
        columns={[
          {
            key: 'name',
            header: 'Token',
            render: (token) => (
              <>
                <strong>{token.name}</strong>
                <div class="muted">
                  <code>sk-…{token.lastFour}</code> · group {token.group}
                </div>
              </>
            ),
          },
          {
            key: 'status',
            header: 'Status',
            render: (token) => (
              <span class={`badge badge-${STATUS_TEXT[token.status].tone}`}>
                {STATUS_TEXT[token.status].text}
              </span>
            ),
          },
          { key: 'quota', header: 'Quota', render: (token) => <QuotaBar token={token} /> },
          {
            key: 'limits',
            header: 'Limits',
            render: (token) => (
              <>
                <div>Models: {token.models.length ? token.models.join(', ') : 'all'}</div>
                <div>IPs: {token.allowIps.length ? token.allowIps.join(', ') : 'any'}</div>
                <div>
                  {token.rateLimit === null ? 'No rate limit' : `${token.rateLimit} requests/min`}
                </div>
              </>
            ),
          },
          {
            key: 'expires',
            header: 'Expires',
            render: (token) => (token.expiresAt ? when(token.expiresAt) : 'Never'),
          },
          ...(canEdit
            ? [
                {
                  key: 'actions',
                  header: 'Actions',
                  hiddenHeader: true,
                  render: (token: Token) => (
                    <div class="row-actions">
                      <Switch
                        checked={token.status !== 'disabled'}
                        label={`Enable ${token.name}`}
                        text={token.status === 'disabled' ? 'Off' : 'On'}
                        onChange={(enabled) =>
                          void act(
                            () =>
                              call(
                                api.PATCH('/api/tokens/{id}', {
                                  params: { path: { id: token.id } },
                                  body: { enabled, version: token.version },
                                }),
                              ),
                            `${token.name} ${enabled ? 'enabled' : 'disabled'}.`,
                          )
                        }
                      />
                      <RowButton action="Edit" row={token.name} onClick={() => setEditing(token)} />
                      <RowButton
                        action="Delete"
                        row={token.name}
                        onClick={() => setDeleting(token)}
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
        label="tokens"
        one="token"
        page={page}
        pageSize={PAGE_SIZE}
        total={tokens.data?.total ?? 0}
        onPage={setPage}
      />
      {editing && (
        <TokenForm
          token={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onCreated={(made) => {
            setEditing(null);
            setCreated(made);
            void tokens.reload();
          }}
          onSaved={async (saved) => {
            notify(`${saved.name} saved.`);
            setEditing(null);
            await tokens.reload();
          }}
        />
      )}
      {created && <CreatedTokens created={created} onClose={() => setCreated(null)} />}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.name}?`}
          message="Requests with this token are refused from now on. Its usage records stay."
          confirm="Delete token"
          onCancel={() => setDeleting(null)}
          onConfirm={() => {
            const target = deleting;
            setDeleting(null);
            void act(
              () => call(api.DELETE('/api/tokens/{id}', { params: { path: { id: target.id } } })),
              `${target.name} deleted.`,
            );
          }}
        />
      )}
    </section>
  );
}

function QuotaBar(props: { token: Token }) {
  const { token } = props;
  if (token.quota === null) return <span>{money(token.usedQuota)} used · unlimited</span>;
  return (
    <div>
      <progress
        class="bar"
        max={token.quota}
        value={Math.min(token.usedQuota, token.quota)}
        aria-label={`Quota used by ${token.name}`}
      />
      <div class="muted">
        {money(token.usedQuota)} used, {money(token.remainingQuota)} left of {money(token.quota)}
      </div>
    </div>
  );
}
