import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type AdminModel, type ChatUser, type Plan } from '../../api/types.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { LedgerView } from '../../components/LedgerView.js';
import { count } from '../../components/UsageView.js';
import {
  DataTable,
  FormActions,
  Pager,
  SelectField,
  Switch,
  TextField,
  fieldErrors,
  useAction,
  useLoad,
  useToast,
  type Column,
} from '@switchyard/ui';

const PAGE_SIZE = 20;

export function UsersPage() {
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(1);
  const users = useLoad(() => chat.listUsers(query, page, PAGE_SIZE), [query, page]);
  const models = useLoad(chat.listAdminModels, []);
  const [editing, setEditing] = useState<ChatUser | null>(null);
  const [crediting, setCrediting] = useState<ChatUser | null>(null);
  const [planning, setPlanning] = useState<ChatUser | null>(null);
  const notify = useToast();
  const { act, error } = useAction(users.reload);

  const setDisabled = (user: ChatUser, disabled: boolean) =>
    act(
      () => chat.updateUser(user.id, { modelPermissions: user.modelPermissions, disabled }),
      `${user.username} ${disabled ? 'disabled' : 'enabled'}.`,
    );

  const columns: Column<ChatUser>[] = [
    { key: 'username', header: 'Username', render: (user) => user.username },
    { key: 'email', header: 'Email', render: (user) => user.email ?? '—' },
    { key: 'role', header: 'Role', render: (user) => user.role },
    {
      key: 'permissions',
      header: 'Model permissions',
      render: (user) =>
        user.modelPermissions.length === 0 ? 'none' : user.modelPermissions.join(', '),
    },
    { key: 'requests', header: 'Requests', render: (user) => count(user.usage.requests) },
    { key: 'tokens', header: 'Tokens', render: (user) => count(user.usage.totalTokens) },
    { key: 'credits', header: 'Credits', render: (user) => count(user.credits) },
    { key: 'plan', header: 'Plan', render: (user) => user.plan?.name ?? '—' },
    {
      key: 'disabled',
      header: 'Disabled',
      render: (user) => (
        <Switch
          checked={user.disabled}
          label={`Disable ${user.username}`}
          text={user.disabled ? 'Disabled' : 'Active'}
          onChange={(disabled) => void setDisabled(user, disabled)}
        />
      ),
    },
    {
      key: 'actions',
      header: 'Actions',
      hiddenHeader: true,
      render: (user) => (
        <div class="row-actions">
          <button type="button" class="link-button" onClick={() => setEditing(user)}>
            Permissions<span class="visually-hidden"> of {user.username}</span>
          </button>
          <button
            type="button"
            class="link-button"
            onClick={() => {
              setEditing(null);
              setPlanning(null);
              setCrediting(user);
            }}
          >
            Credits<span class="visually-hidden"> of {user.username}</span>
          </button>
          <button
            type="button"
            class="link-button"
            onClick={() => {
              setEditing(null);
              setCrediting(null);
              setPlanning(user);
            }}
          >
            Plan<span class="visually-hidden"> of {user.username}</span>
          </button>
        </div>
      ),
    },
  ];

  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <form
        class="search"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setPage(1);
          setQuery(search.trim());
        }}
      >
        <label>
          Search users
          <input
            type="search"
            value={search}
            onInput={(event) => setSearch(event.currentTarget.value)}
          />
        </label>
        <button type="submit">Search</button>
      </form>
      <ErrorNotice error={error ?? users.error} />
      {editing && (
        <PermissionsForm
          user={editing}
          models={models.data?.items ?? []}
          onCancel={() => setEditing(null)}
          onSaved={async () => {
            setEditing(null);
            await users.reload();
            notify(`Model permissions of ${editing.username} saved.`);
          }}
        />
      )}
      {crediting && (
        <CreditsPanel
          user={crediting}
          onClose={() => setCrediting(null)}
          onAdjusted={async (message) => {
            await users.reload();
            notify(message);
          }}
        />
      )}
      {planning && (
        <PlanPanel
          key={planning.id}
          user={planning}
          onClose={() => setPlanning(null)}
          onSaved={async (message) => {
            setPlanning(null);
            await users.reload();
            notify(message);
          }}
        />
      )}
      <DataTable
        caption={`Users (${users.data?.total ?? 0})`}
        columns={columns}
        rows={users.data?.items}
        rowKey={(user) => user.id}
        loading={users.loading}
        empty="No users match."
      />
      <Pager
        label="users"
        one="user"
        page={page}
        pageSize={PAGE_SIZE}
        total={users.data?.total ?? 0}
        onPage={setPage}
      />
    </section>
  );
}

function PermissionsForm(props: {
  user: ChatUser;
  models: AdminModel[];
  onCancel: () => void;
  onSaved: () => Promise<void>;
}) {
  const names = new Set(props.models.map((model) => model.name));
  const [chosen, setChosen] = useState(() => new Set(props.user.modelPermissions));
  // Permissions for names not in the model list (a custom assistant, say) are kept as text.
  const [others, setOthers] = useState(
    props.user.modelPermissions.filter((name) => !names.has(name)).join(', '),
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const toggle = (name: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(name);
    else next.delete(name);
    setChosen(next);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const extra = others
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    const modelPermissions = [
      ...new Set([...[...chosen].filter((name) => names.has(name)), ...extra]),
    ];
    try {
      await chat.updateUser(props.user.id, { modelPermissions, disabled: props.user.disabled });
      await props.onSaved();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card editor" onSubmit={(event) => void submit(event)}>
      <h2>Model permissions of {props.user.username}</h2>
      <ErrorNotice error={error} />
      <fieldset>
        <legend>Models this user may use</legend>
        {props.models.length === 0 && <p>No models yet.</p>}
        {props.models.map((model) => (
          <label key={String(model.id)} class="check">
            <input
              type="checkbox"
              checked={chosen.has(model.name)}
              onChange={(event) => toggle(model.name, event.currentTarget.checked)}
            />
            <code>{model.name}</code>
            {model.open && <span class="cell-note"> (open to all anyway)</span>}
          </label>
        ))}
      </fieldset>
      <label>
        Other model names <span class="optional">(comma-separated)</span>
        <input value={others} onInput={(event) => setOthers(event.currentTarget.value)} />
      </label>
      <FormActions submit="Save permissions" busy={busy} onCancel={props.onCancel} />
    </form>
  );
}

/** A user's balance: an adjustment with its reason, and their whole ledger. */
function CreditsPanel(props: {
  user: ChatUser;
  onClose: () => void;
  onAdjusted: (message: string) => Promise<void>;
}) {
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [force, setForce] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  const fields = fieldErrors(error);
  const { user } = props;

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const entry = await chat.adjustCredits(user.id, {
        amount: Number(amount),
        reason: reason.trim(),
        ...(force ? { force } : {}),
      });
      setAmount('');
      setReason('');
      setForce(false);
      setVersion((v) => v + 1);
      await props.onAdjusted(
        `${user.username}: ${entry.amount > 0 ? '+' : ''}${entry.amount} credits, balance ${entry.balanceAfter}.`,
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="card editor">
      <h2>Credits of {user.username}</h2>
      <form
        class="editor"
        onSubmit={(event) => void submit(event)}
        aria-label={`Adjust the credits of ${user.username}`}
      >
        <ErrorNotice error={error} />
        <TextField
          label="Credits to add (negative to take away)"
          type="number"
          required
          value={amount}
          onInput={setAmount}
          error={fields['amount']}
        />
        <TextField
          label="Reason"
          required
          value={reason}
          onInput={setReason}
          error={fields['reason']}
          hint="Shown in the user’s credit history."
        />
        <label class="check">
          <input
            type="checkbox"
            checked={force}
            onChange={(event) => setForce(event.currentTarget.checked)}
          />
          Allow a negative balance
        </label>
        <FormActions submit="Adjust" busy={busy} onCancel={props.onClose} />
      </form>
      <LedgerView
        caption={`Credit history of ${user.username}`}
        load={(page, pageSize, kind) => chat.userLedger(user.id, page, pageSize, kind)}
        version={version}
      />
    </div>
  );
}

/** The user's plan (docs/credits.md, "Plans"): put them on one, or take it away. */
function PlanPanel(props: {
  user: ChatUser;
  onClose: () => void;
  onSaved: (message: string) => Promise<void>;
}) {
  const { user } = props;
  const current = useLoad(() => chat.userPlan(user.id), [user.id]);
  const plans = useLoad(chat.listPlans, []);
  const [chosen, setChosen] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);
  const currentId = current.data?.plan ? String(current.data.plan.id) : '';
  const value = chosen ?? currentId;
  // Disabled plans take no new users; the user's own stays listed so the form shows it.
  const options = [
    { value: '', label: 'No plan' },
    ...(plans.data?.items ?? [])
      .filter((plan: Plan) => !plan.disabled || String(plan.id) === currentId)
      .map((plan: Plan) => ({
        value: String(plan.id),
        label: `${plan.name}: ${plan.credits} credits a ${plan.period}${plan.disabled ? ' (disabled)' : ''}`,
      })),
  ];

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const saved = await chat.assignPlan(user.id, value === '' ? null : Number(value));
      await props.onSaved(
        saved.plan
          ? `${user.username} is on the plan ${saved.plan.name}; balance ${saved.balance}.`
          : `${user.username} has no plan now.`,
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="card editor"
      onSubmit={(event) => void submit(event)}
      aria-label={`Plan of ${user.username}`}
      aria-busy={current.loading || plans.loading}
    >
      <h2>Plan of {user.username}</h2>
      <ErrorNotice error={error ?? current.error ?? plans.error} />
      {current.data && (
        <p>
          {current.data.plan
            ? `On ${current.data.plan.name}; next top-up ${new Date(current.data.nextTopUpAt ?? '').toLocaleString()}.`
            : 'No plan.'}
        </p>
      )}
      <SelectField
        label="Plan"
        value={value}
        options={options}
        onChange={setChosen}
        error={fields['planId']}
      />
      <p class="hint">
        A new plan adds its credits for the current period at once. Taking a plan away keeps the
        credits it added.
      </p>
      <FormActions submit="Save plan" busy={busy} onCancel={props.onClose} />
    </form>
  );
}
