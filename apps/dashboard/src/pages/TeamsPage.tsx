import {
  ConfirmDialog,
  DataTable,
  Dialog,
  Pager,
  ProblemNotice,
  RowButton,
  SelectField,
  TextField,
  fieldErrors,
  useAction,
  useLoad,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { BudgetList, OneFieldForm, TeamCard } from '../components/TeamCard.js';
import { dollarsToMicros, listOf, money, toNumberOrNull, when } from '../format.js';
import { useCanEdit } from '../me.js';

type Team = Schemas['TeamResponse'];
type Period = Schemas['SetBudgetDto']['period'];
const PAGE_SIZE = 20;

/** Teams, their members, budgets and balances; price groups below them. */
export function TeamsPage() {
  const canEdit = useCanEdit();
  const [page, setPage] = useState(1);
  const teams = useLoad(
    () => call(api.GET('/api/teams', { params: { query: { page, pageSize: PAGE_SIZE } } })),
    [page],
  );
  const [editing, setEditing] = useState<Team | 'new' | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const [deleting, setDeleting] = useState<Team | null>(null);
  const { act, error } = useAction(teams.reload);
  return (
    <section aria-labelledby="teams-title">
      <div class="page-header">
        <h1 id="teams-title">Teams</h1>
        {canEdit && (
          <button type="button" onClick={() => setEditing('new')}>
            Create team
          </button>
        )}
      </div>
      <ProblemNotice error={error ?? teams.error} explain={explain} />
      <DataTable
        caption={`Teams (${teams.data?.total ?? 0})`}
        rows={teams.data?.items}
        rowKey={(team) => team.id}
        loading={teams.loading}
        empty="No teams yet."
        columns={[
          {
            key: 'name',
            header: 'Team',
            render: (team) => (
              <>
                <strong>{team.name}</strong>
                <div class="muted">
                  {team.members.length} member(s) · {team.tokenCount} token(s)
                </div>
              </>
            ),
          },
          {
            key: 'policy',
            header: 'Policy',
            render: (team) => (
              <>
                <div>Models: {team.models.length ? team.models.join(', ') : 'all'}</div>
                <div>
                  {team.rateLimit === null
                    ? 'No rate cap'
                    : `At most ${team.rateLimit} requests/min`}
                </div>
                <div>
                  {team.maxTokenDays === null
                    ? 'Tokens may never expire'
                    : `Tokens expire within ${team.maxTokenDays} day(s)`}
                </div>
              </>
            ),
          },
          {
            key: 'billing',
            header: 'Billing',
            render: (team) => (
              <>
                {team.billing === 'balance' ? `Balance ${money(team.balance)}` : 'Budgets'}
                <div class="muted">Price group {team.priceGroup}</div>
              </>
            ),
          },
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            render: (team: Team) => (
              <div class="row-actions">
                <RowButton action="Open" row={team.name} onClick={() => setOpen(team.id)} />
                {canEdit && (
                  <RowButton action="Edit" row={team.name} onClick={() => setEditing(team)} />
                )}
                {canEdit && (
                  <RowButton
                    action="Delete"
                    row={team.name}
                    onClick={() => setDeleting(team)}
                    danger
                  />
                )}
              </div>
            ),
          },
        ]}
      />
      <Pager
        label="teams"
        one="team"
        page={page}
        pageSize={PAGE_SIZE}
        total={teams.data?.total ?? 0}
        onPage={setPage}
      />
      {open !== null && <TeamDetail id={open} onChanged={teams.reload} />}
      <PriceGroups />
      {editing && (
        <TeamForm
          team={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={async () => {
            setEditing(null);
            await teams.reload();
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.name}?`}
          message="Its budgets and balance ledger go with it. A team that still has tokens cannot be deleted."
          confirm="Delete team"
          onCancel={() => setDeleting(null)}
          onConfirm={() => {
            const target = deleting;
            setDeleting(null);
            if (open === target.id) setOpen(null);
            void act(
              () => call(api.DELETE('/api/teams/{id}', { params: { path: { id: target.id } } })),
              `${target.name} deleted.`,
            );
          }}
        />
      )}
    </section>
  );
}

function TeamForm(props: { team: Team | null; onClose: () => void; onSaved: () => Promise<void> }) {
  const existing = props.team;
  const [name, setName] = useState(existing?.name ?? '');
  const [models, setModels] = useState(existing?.models.join(', ') ?? '');
  const [rateLimit, setRateLimit] = useState(existing?.rateLimit?.toString() ?? '');
  const [maxTokenDays, setMaxTokenDays] = useState(existing?.maxTokenDays?.toString() ?? '');
  const [priceGroup, setPriceGroup] = useState(existing?.priceGroup ?? 'default');
  const [billing, setBilling] = useState<Team['billing']>(existing?.billing ?? 'budget');
  const groups = useLoad(() => call(api.GET('/api/price-groups')), []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      name: name.trim(),
      models: listOf(models),
      rateLimit: toNumberOrNull(rateLimit),
      maxTokenDays: toNumberOrNull(maxTokenDays),
      priceGroup,
      billing,
    };
    try {
      if (existing) {
        await call(api.PATCH('/api/teams/{id}', { params: { path: { id: existing.id } }, body }));
      } else {
        await call(api.POST('/api/teams', { body }));
      }
      await props.onSaved();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={existing ? `Edit ${existing.name}` : 'Create team'} onClose={props.onClose}>
      <form class="editor" onSubmit={(event) => void submit(event)}>
        <ProblemNotice error={error} explain={explain} />
        <TextField label="Name" value={name} onInput={setName} required error={fields.name} />
        <TextField
          label="Models its tokens may use (comma-separated; empty: all)"
          value={models}
          onInput={setModels}
          error={fields.models}
        />
        <div class="form-grid">
          <TextField
            label="Highest requests per minute of a token (empty: no cap)"
            type="number"
            min={1}
            value={rateLimit}
            onInput={setRateLimit}
            error={fields.rateLimit}
          />
          <TextField
            label="Longest token lifetime in days (empty: no limit)"
            type="number"
            min={1}
            value={maxTokenDays}
            onInput={setMaxTokenDays}
            error={fields.maxTokenDays}
          />
        </div>
        <div class="form-grid">
          <SelectField
            label="Price group"
            value={priceGroup}
            onChange={setPriceGroup}
            error={fields.priceGroup}
            options={(groups.data?.items ?? [{ name: 'default', multiplier: '1' }]).map((g) => ({
              value: g.name,
              label: `${g.name} (×${g.multiplier})`,
            }))}
          />
          <SelectField
            label="Billing"
            value={billing}
            onChange={(value) => setBilling(value as Team['billing'])}
            error={fields.billing}
            options={[
              { value: 'budget', label: 'Period budgets' },
              { value: 'balance', label: 'Prepaid balance' },
            ]}
          />
        </div>
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            {existing ? 'Save team' : 'Create team'}
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** One team: members, budgets as bars with reset times, balance and its ledger. */
function TeamDetail(props: { id: number; onChanged: () => Promise<void> }) {
  const canEdit = useCanEdit();
  const team = useLoad(
    () => call(api.GET('/api/teams/{id}', { params: { path: { id: props.id } } })),
    [props.id],
  );
  const reload = async () => {
    await team.reload();
    await props.onChanged();
  };
  const { act, error } = useAction(reload);
  const [username, setUsername] = useState('');
  const [amount, setAmount] = useState('');
  const [period, setPeriod] = useState<Period>('month');
  const [budgetFor, setBudgetFor] = useState('team');
  const [credit, setCredit] = useState('');
  const [warning, setWarning] = useState<string | null>(null);
  const data = team.data;
  if (!data) return <ProblemNotice error={team.error} explain={explain} />;
  const teamBudget = data.budgets.find((b) => b.level === 'team');
  return (
    <TeamCard headingId="team-detail-title" name={data.name} error={error}>
      <h3>Budgets</h3>
      {warning && (
        <p role="status" class="notice">
          {warning}
        </p>
      )}
      <BudgetList
        budgets={data.budgets}
        empty="No budgets: spending is limited only by the gateway's."
        actions={(budget) =>
          canEdit && (
            <RowButton
              action="Clear budget"
              row={budget.label}
              onClick={() =>
                void act(
                  () =>
                    call(api.DELETE('/api/budgets/{id}', { params: { path: { id: budget.id } } })),
                  `Budget of ${budget.label} cleared.`,
                )
              }
            />
          )
        }
      />
      {canEdit && (
        <form
          class="toolbar"
          aria-label="Set a budget"
          onSubmit={(event) => {
            event.preventDefault();
            const userId = budgetFor === 'team' ? undefined : Number(budgetFor);
            void act(async () => {
              const set = await call(
                api.PUT('/api/budgets', {
                  body: {
                    level: userId === undefined ? 'team' : 'member',
                    teamId: data.id,
                    ...(userId === undefined ? {} : { userId }),
                    amount: dollarsToMicros(amount) ?? -1,
                    period,
                  },
                }),
              );
              setAmount('');
              setWarning(set.warning ?? null);
            }, 'Budget set.');
          }}
        >
          <SelectField
            label="Budget of"
            value={budgetFor}
            onChange={setBudgetFor}
            options={[
              { value: 'team', label: `The team${teamBudget ? ' (replace)' : ''}` },
              ...data.members.map((m) => ({ value: String(m.userId), label: m.username })),
            ]}
          />
          <TextField label="Amount (US dollars)" value={amount} onInput={setAmount} />
          <SelectField
            label="Period"
            value={period}
            onChange={(value) => setPeriod(value as Period)}
            options={[
              { value: 'day', label: 'Per day' },
              { value: 'week', label: 'Per week' },
              { value: 'month', label: 'Per month' },
              { value: 'none', label: 'In total (never resets)' },
            ]}
          />
          <button type="submit">Set budget</button>
        </form>
      )}
      <h3>Members</h3>
      <ul class="plain">
        {data.members.map((m) => (
          <li key={m.userId}>
            {m.username}
            {canEdit && (
              <>
                {' '}
                <RowButton
                  action="Remove"
                  row={m.username}
                  danger
                  onClick={() =>
                    void act(
                      () =>
                        call(
                          api.DELETE('/api/teams/{id}/members/{userId}', {
                            params: { path: { id: data.id, userId: m.userId } },
                          }),
                        ),
                      `${m.username} removed.`,
                    )
                  }
                />
              </>
            )}
          </li>
        ))}
        {data.members.length === 0 && <li class="muted">No members yet.</li>}
      </ul>
      {canEdit && (
        <OneFieldForm
          name="Add a member"
          label="Username of a member account"
          value={username}
          onInput={setUsername}
          submit="Add member"
          onSubmit={() =>
            void act(async () => {
              await call(
                api.POST('/api/teams/{id}/members', {
                  params: { path: { id: data.id } },
                  body: { username: username.trim() },
                }),
              );
              setUsername('');
            }, 'Member added.')
          }
        />
      )}
      {data.billing === 'balance' && (
        <>
          <h3>Balance: {money(data.balance)}</h3>
          {canEdit && (
            <OneFieldForm
              name="Credit the balance"
              label="Credit (US dollars)"
              value={credit}
              onInput={setCredit}
              submit="Credit"
              onSubmit={() =>
                void act(async () => {
                  await call(
                    api.POST('/api/teams/{id}/balance/credits', {
                      params: { path: { id: data.id } },
                      body: {
                        amount: dollarsToMicros(credit) ?? -1,
                        reason: 'credited on the dashboard',
                      },
                    }),
                  );
                  setCredit('');
                }, 'Balance credited.')
              }
            />
          )}
          <Ledger teamId={data.id} key={data.balance} />
        </>
      )}
    </TeamCard>
  );
}

function Ledger(props: { teamId: number }) {
  const ledger = useLoad(
    () =>
      call(
        api.GET('/api/teams/{id}/balance/ledger', {
          params: { path: { id: props.teamId }, query: { page: 1, pageSize: 20 } },
        }),
      ),
    [props.teamId],
  );
  return (
    <DataTable
      caption={`Ledger (${ledger.data?.total ?? 0} entries, newest first)`}
      rows={ledger.data?.items}
      rowKey={(entry) => entry.id}
      loading={ledger.loading}
      empty="No entries yet."
      columns={[
        { key: 'when', header: 'When', render: (entry) => when(entry.createdAt) },
        { key: 'kind', header: 'Kind', render: (entry) => entry.kind },
        { key: 'amount', header: 'Amount', render: (entry) => money(entry.amount) },
        { key: 'after', header: 'Balance after', render: (entry) => money(entry.balanceAfter) },
        { key: 'reason', header: 'Why', render: (entry) => entry.reason },
      ]}
    />
  );
}

/** Price groups: a multiplier of model prices for the teams in each. */
function PriceGroups() {
  const canEdit = useCanEdit();
  const groups = useLoad(() => call(api.GET('/api/price-groups')), []);
  const { act, error } = useAction(groups.reload);
  const [name, setName] = useState('');
  const [multiplier, setMultiplier] = useState('1');
  return (
    <section aria-labelledby="groups-title">
      <h2 id="groups-title">Price groups</h2>
      <ProblemNotice error={error ?? groups.error} explain={explain} />
      <DataTable
        caption="Price groups"
        rows={groups.data?.items}
        rowKey={(group) => group.name}
        loading={groups.loading}
        empty="Only the default group."
        columns={[
          { key: 'name', header: 'Group', render: (group) => <strong>{group.name}</strong> },
          { key: 'multiplier', header: 'Multiplier', render: (group) => `×${group.multiplier}` },
          { key: 'teams', header: 'Teams', render: (group) => group.teamCount },
          ...(canEdit
            ? [
                {
                  key: 'actions',
                  header: 'Actions',
                  hiddenHeader: true,
                  render: (group: Schemas['PriceGroupResponse']) =>
                    group.name === 'default' ? null : (
                      <RowButton
                        action="Delete"
                        row={group.name}
                        danger
                        onClick={() =>
                          void act(
                            () =>
                              call(
                                api.DELETE('/api/price-groups/{name}', {
                                  params: { path: { name: group.name } },
                                }),
                              ),
                            `${group.name} deleted.`,
                          )
                        }
                      />
                    ),
                },
              ]
            : []),
        ]}
      />
      {canEdit && (
        <form
          class="toolbar"
          aria-label="Set a price group"
          onSubmit={(event) => {
            event.preventDefault();
            void act(
              () =>
                call(
                  api.PUT('/api/price-groups/{name}', {
                    params: { path: { name: name.trim() } },
                    body: { multiplier: multiplier.trim() },
                  }),
                ),
              `${name.trim()} saved.`,
            );
          }}
        >
          <TextField label="Group name" value={name} onInput={setName} />
          <TextField
            label="Multiplier (1 = list price)"
            value={multiplier}
            onInput={setMultiplier}
          />
          <button type="submit">Save group</button>
        </form>
      )}
    </section>
  );
}
