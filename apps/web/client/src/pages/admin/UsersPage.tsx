import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type AdminModel, type ChatUser } from '../../api/types.js';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice.js';
import { FormActions, Switch, useLoad } from '@switchyard/ui';

const PAGE_SIZE = 20;

export function UsersPage() {
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(1);
  const users = useLoad(() => chat.listUsers(query, page, PAGE_SIZE), [query, page]);
  const models = useLoad(chat.listAdminModels, []);
  const [editing, setEditing] = useState<ChatUser | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const pages = Math.max(1, Math.ceil((users.data?.total ?? 0) / PAGE_SIZE));

  const setDisabled = async (user: ChatUser, disabled: boolean) => {
    setError(null);
    setDone(null);
    try {
      await chat.updateUser(user.id, { modelPermissions: user.modelPermissions, disabled });
      setDone(`${user.username} ${disabled ? 'disabled' : 'enabled'}.`);
      await users.reload();
    } catch (failure) {
      setError(failure);
    }
  };

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
      <SuccessNotice message={done} />
      {editing && (
        <PermissionsForm
          user={editing}
          models={models.data?.items ?? []}
          onCancel={() => setEditing(null)}
          onSaved={async () => {
            setDone(`Model permissions of ${editing.username} saved.`);
            setEditing(null);
            await users.reload();
          }}
        />
      )}
      <div class="table-scroll">
        <table aria-busy={users.loading}>
          <caption class="visually-hidden">Users ({users.data?.total ?? 0})</caption>
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Model permissions</th>
              <th scope="col">Disabled</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.data?.items.length === 0 && (
              <tr>
                <td colSpan={6}>No users match.</td>
              </tr>
            )}
            {users.data?.items.map((user) => (
              <tr key={String(user.id)}>
                <td>{user.username}</td>
                <td>{user.email ?? '—'}</td>
                <td>{user.role}</td>
                <td>
                  {user.modelPermissions.length === 0 ? 'none' : user.modelPermissions.join(', ')}
                </td>
                <td>
                  <Switch
                    checked={user.disabled}
                    label={`Disable ${user.username}`}
                    text={user.disabled ? 'Disabled' : 'Active'}
                    onChange={(disabled) => void setDisabled(user, disabled)}
                  />
                </td>
                <td class="row-actions">
                  <button type="button" class="link-button" onClick={() => setEditing(user)}>
                    Permissions<span class="visually-hidden"> of {user.username}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages of users">
        <button
          type="button"
          class="secondary"
          disabled={page <= 1}
          onClick={() => setPage(page - 1)}
        >
          Previous
        </button>
        <span aria-live="polite">
          Page {page} of {pages} ({users.data?.total ?? 0}{' '}
          {users.data?.total === 1 ? 'user' : 'users'})
        </span>
        <button
          type="button"
          class="secondary"
          disabled={page >= pages}
          onClick={() => setPage(page + 1)}
        >
          Next
        </button>
      </nav>
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
