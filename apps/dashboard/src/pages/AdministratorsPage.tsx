import {
  ConfirmDialog,
  DataTable,
  Dialog,
  fieldErrors,
  Pager,
  ProblemNotice,
  RowButton,
  SelectField,
  Switch,
  TextField,
  useLoad,
  useToast,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { when } from '../format.js';
import { useMe } from '../me.js';

type Admin = Schemas['AdminResponse'];
type Role = Schemas['AdminRole'];
const PAGE_SIZE = 20;
const ROLES: { value: Role; label: string }[] = [
  { value: 'owner', label: 'Owner (everything, administrators too)' },
  { value: 'admin', label: 'Admin (channels, tokens, prices)' },
  { value: 'viewer', label: 'Viewer (read only)' },
];

export function AdministratorsPage() {
  const me = useMe();
  const notify = useToast();
  const [page, setPage] = useState(1);
  const admins = useLoad(
    () => call(api.GET('/api/admins', { params: { query: { page, pageSize: PAGE_SIZE } } })),
    [page],
  );
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Admin | null>(null);
  const [error, setError] = useState<unknown>(null);

  const update = async (admin: Admin, body: Schemas['UpdateAdminDto'], done: string) => {
    setError(null);
    try {
      await call(api.PATCH('/api/admins/{id}', { params: { path: { id: admin.id } }, body }));
      notify(done);
      await admins.reload();
    } catch (failure) {
      setError(failure);
    }
  };

  if (me.role !== 'owner') {
    return (
      <section>
        <h1>Administrators</h1>
        <ProblemNotice
          error={{ status: 403, code: 'forbidden', message: 'Only owners manage administrators.' }}
          explain={explain}
        />
      </section>
    );
  }

  return (
    <section aria-labelledby="admins-title">
      <div class="page-header">
        <h1 id="admins-title">Administrators</h1>
        <button type="button" onClick={() => setCreating(true)}>
          Add administrator
        </button>
      </div>
      <ProblemNotice error={error ?? admins.error} explain={explain} />
      <DataTable
        caption={`Administrators (${admins.data?.total ?? 0})`}
        rows={admins.data?.items}
        rowKey={(admin) => admin.id}
        loading={admins.loading}
        columns={[
          {
            key: 'username',
            header: 'Username',
            render: (admin) => (
              <>
                {admin.username}
                {admin.id === me.id && <span class="muted"> (you)</span>}
                {admin.mustChangePassword && <div class="muted">must change the password</div>}
              </>
            ),
          },
          {
            key: 'role',
            header: 'Role',
            render: (admin) => (
              <select
                aria-label={`Role of ${admin.username}`}
                value={admin.role}
                disabled={admin.id === me.id}
                onChange={(event) => {
                  const role = event.currentTarget.value as Role;
                  void update(admin, { role }, `${admin.username} is now ${role}.`);
                }}
              >
                {ROLES.map((role) => (
                  <option key={role.value} value={role.value}>
                    {role.value}
                  </option>
                ))}
              </select>
            ),
          },
          {
            key: 'enabled',
            header: 'Enabled',
            render: (admin) => (
              <Switch
                checked={!admin.disabled}
                disabled={admin.id === me.id}
                label={`Enable ${admin.username}`}
                text={admin.disabled ? 'Off' : 'On'}
                onChange={(enabled) =>
                  void update(
                    admin,
                    { disabled: !enabled },
                    `${admin.username} ${enabled ? 'enabled' : 'disabled'}.`,
                  )
                }
              />
            ),
          },
          { key: 'created', header: 'Created', render: (admin) => when(admin.createdAt) },
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            render: (admin) =>
              admin.id === me.id ? null : (
                <RowButton
                  action="Delete"
                  row={admin.username}
                  onClick={() => setDeleting(admin)}
                  danger
                />
              ),
          },
        ]}
      />
      <Pager
        label="administrators"
        one="administrator"
        page={page}
        pageSize={PAGE_SIZE}
        total={admins.data?.total ?? 0}
        onPage={setPage}
      />
      {creating && (
        <CreateAdmin
          onClose={() => setCreating(false)}
          onCreated={async (admin) => {
            notify(`${admin.username} added; they choose their own password at first sign-in.`);
            setCreating(false);
            await admins.reload();
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.username}?`}
          message="Their sessions end at once. The audit log keeps their name."
          confirm="Delete administrator"
          onCancel={() => setDeleting(null)}
          onConfirm={() => {
            const target = deleting;
            setDeleting(null);
            void (async () => {
              try {
                await call(api.DELETE('/api/admins/{id}', { params: { path: { id: target.id } } }));
                notify(`${target.username} deleted.`);
                await admins.reload();
              } catch (failure) {
                setError(failure);
              }
            })();
          }}
        />
      )}
    </section>
  );
}

function CreateAdmin(props: { onClose: () => void; onCreated: (admin: Admin) => Promise<void> }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      await props.onCreated(
        await call(
          api.POST('/api/admins', { body: { username: username.trim(), password, role } }),
        ),
      );
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <Dialog title="Add administrator" onClose={props.onClose}>
      <form class="editor" onSubmit={(event) => void submit(event)}>
        <ProblemNotice error={error} explain={explain} />
        <TextField
          label="Username"
          value={username}
          onInput={setUsername}
          required
          error={fields.username}
        />
        <TextField
          label="Initial password"
          type="password"
          autoComplete="new-password"
          value={password}
          onInput={setPassword}
          required
          hint="They must change it at their first sign-in."
          error={fields.password}
        />
        <SelectField
          label="Role"
          value={role}
          onChange={(value) => setRole(value as Role)}
          options={ROLES}
          error={fields.role}
        />
        <div class="form-actions">
          <button type="submit">Add administrator</button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
