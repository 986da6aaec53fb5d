import {
  ConfirmDialog,
  DataTable,
  Dialog,
  ProblemNotice,
  RowButton,
  TextField,
  fieldErrors,
  useAction,
  useLoad,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { BudgetList, OneFieldForm, TeamCard } from '../components/TeamCard.js';
import { CreatedTokens, type Created } from '../components/TokenForm.js';
import { listOf, money, toNumberOrNull, when } from '../format.js';

type Token = Schemas['TokenResponse'];

/** A member's own view: their teams, budgets, tokens, usage and codes to redeem. */
export function MyTeamsPage() {
  const teams = useLoad(() => call(api.GET('/api/my/teams')), []);
  return (
    <section aria-labelledby="my-title">
      <h1 id="my-title">My teams</h1>
      <ProblemNotice error={teams.error} explain={explain} />
      {teams.data?.items.length === 0 && (
        <p>You belong to no team yet. Ask an administrator to add you to one.</p>
      )}
      {teams.data?.items.map((team) => (
        <MyTeam key={team.id} id={team.id} />
      ))}
    </section>
  );
}

function MyTeam(props: { id: number }) {
  const team = useLoad(
    () => call(api.GET('/api/my/teams/{teamId}', { params: { path: { teamId: props.id } } })),
    [props.id],
  );
  const tokens = useLoad(
    () =>
      call(
        api.GET('/api/my/teams/{teamId}/tokens', {
          params: { path: { teamId: props.id }, query: { page: 1, pageSize: 100 } },
        }),
      ),
    [props.id],
  );
  const usage = useLoad(
    () =>
      call(
        api.GET('/api/my/teams/{teamId}/usage', {
          params: { path: { teamId: props.id }, query: { page: 1, pageSize: 20 } },
        }),
      ),
    [props.id],
  );
  const reload = async () => {
    await Promise.all([team.reload(), tokens.reload()]);
  };
  const { act, error } = useAction(reload);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const [revoking, setRevoking] = useState<Token | null>(null);
  const [code, setCode] = useState('');
  const data = team.data;
  if (!data) return <ProblemNotice error={team.error} explain={explain} />;
  return (
    <TeamCard headingId={`team-${data.id}-title`} name={data.name} error={error}>
      <p class="muted">
        Models: {data.models.length ? data.models.join(', ') : 'all'} ·{' '}
        {data.rateLimit === null
          ? 'no rate cap'
          : `at most ${data.rateLimit} requests/min per token`}{' '}
        ·{' '}
        {data.maxTokenDays === null
          ? 'tokens may never expire'
          : `tokens last at most ${data.maxTokenDays} day(s)`}
      </p>
      <h3>Budgets</h3>
      <BudgetList budgets={data.budgets} empty="No budget covers you here." />
      {data.billing === 'balance' && (
        <>
          <h3>Balance: {money(data.balance)}</h3>
          <OneFieldForm
            name={`Redeem a code for ${data.name}`}
            label="Redemption code"
            value={code}
            onInput={setCode}
            placeholder="SY-XXXX-XXXX-XXXX"
            submit="Redeem"
            onSubmit={() =>
              void act(async () => {
                await call(
                  api.POST('/api/my/teams/{teamId}/redeem', {
                    params: { path: { teamId: data.id } },
                    body: { code: code.trim() },
                  }),
                );
                setCode('');
              }, 'Code redeemed.')
            }
          />
        </>
      )}
      <div class="page-header">
        <h3>My tokens</h3>
        <button type="button" onClick={() => setCreating(true)}>
          Create token<span class="visually-hidden"> for {data.name}</span>
        </button>
      </div>
      <DataTable
        caption={`My tokens in ${data.name} (${tokens.data?.total ?? 0})`}
        rows={tokens.data?.items}
        rowKey={(token) => token.id}
        loading={tokens.loading}
        empty="You have made no token here."
        columns={[
          {
            key: 'name',
            header: 'Token',
            render: (token) => (
              <>
                <strong>{token.name}</strong>
                <div class="muted">
                  <code>sk-…{token.lastFour}</code>
                </div>
              </>
            ),
          },
          {
            key: 'models',
            header: 'Models',
            render: (token) => (token.models.length ? token.models.join(', ') : 'all'),
          },
          {
            key: 'expires',
            header: 'Expires',
            render: (token) => (token.expiresAt ? when(token.expiresAt) : 'Never'),
          },
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            render: (token: Token) => (
              <RowButton
                action="Revoke"
                row={token.name}
                danger
                onClick={() => setRevoking(token)}
              />
            ),
          },
        ]}
      />
      <DataTable
        caption="My latest requests here"
        rows={usage.data?.items}
        rowKey={(row) => row.id}
        loading={usage.loading}
        empty="No requests yet."
        columns={[
          { key: 'when', header: 'When', render: (row) => when(row.requestedAt) },
          { key: 'token', header: 'Token', render: (row) => row.tokenName ?? '—' },
          { key: 'model', header: 'Model', render: (row) => row.model },
          { key: 'status', header: 'Status', render: (row) => row.status },
          { key: 'cost', header: 'Cost', render: (row) => money(row.cost) },
        ]}
      />
      {creating && (
        <MyTokenForm
          team={data}
          onClose={() => setCreating(false)}
          onCreated={(made) => {
            setCreating(false);
            setCreated([made]);
            void tokens.reload();
          }}
        />
      )}
      {created && <CreatedTokens created={created} onClose={() => setCreated(null)} />}
      {revoking && (
        <ConfirmDialog
          title={`Revoke ${revoking.name}?`}
          message="Requests with this token are refused from now on."
          confirm="Revoke token"
          onCancel={() => setRevoking(null)}
          onConfirm={() => {
            const target = revoking;
            setRevoking(null);
            void act(
              () =>
                call(
                  api.DELETE('/api/my/teams/{teamId}/tokens/{id}', {
                    params: { path: { teamId: data.id, id: target.id } },
                  }),
                ),
              `${target.name} revoked.`,
            );
          }}
        />
      )}
    </TeamCard>
  );
}

function MyTokenForm(props: {
  team: Schemas['MyTeamResponse'];
  onClose: () => void;
  onCreated: (made: Schemas['CreatedTokenResponse']) => void;
}) {
  const [name, setName] = useState('');
  const [models, setModels] = useState('');
  const [rateLimit, setRateLimit] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      props.onCreated(
        await call(
          api.POST('/api/my/teams/{teamId}/tokens', {
            params: { path: { teamId: props.team.id } },
            body: {
              name: name.trim(),
              ...(models.trim() ? { models: listOf(models) } : {}),
              ...(rateLimit.trim() ? { rateLimit: toNumberOrNull(rateLimit) } : {}),
            },
          }),
        ),
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Create a token for ${props.team.name}`} onClose={props.onClose}>
      <form class="editor" onSubmit={(event) => void submit(event)}>
        <ProblemNotice error={error} explain={explain} />
        <TextField label="Name" value={name} onInput={setName} required error={fields.name} />
        <TextField
          label="Models (comma-separated; empty: the team's)"
          value={models}
          onInput={setModels}
          error={fields.models}
        />
        <TextField
          label="Requests per minute (empty: the team's cap)"
          type="number"
          min={1}
          value={rateLimit}
          onInput={setRateLimit}
          error={fields.rateLimit}
        />
        {fields.expiresAt && <p class="field-error">{fields.expiresAt}</p>}
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            Create token
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
