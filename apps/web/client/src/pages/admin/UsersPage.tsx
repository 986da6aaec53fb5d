import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type AdminModel, type ChatUser } from '../../api/types.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { count } from '../../components/UsageView.js';
import {
  DataTable,
  FormActions,
  Pager,
  Switch,
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
