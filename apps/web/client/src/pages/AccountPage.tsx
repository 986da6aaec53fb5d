import { useState } from 'preact/hooks';
import * as chat from '../api/chat-api.js';
import { type A2aKey } from '../api/types.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { ConfirmDialog, useAction, useLoad } from '@switchyard/ui';

function when(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString() : 'Never';
}

/** The signed-in user's own settings: for now, the A2A keys other agents use. */
export function AccountPage() {
  return (
    <main id="main" class="page">
      <h1>Account</h1>
      <A2aKeysSection />
    </main>
  );
}

function A2aKeysSection() {
  const keys = useLoad(chat.listA2aKeys, []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [revoking, setRevoking] = useState<A2aKey | null>(null);
  const { act, error, setError } = useAction(keys.reload);

  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { record, key } = await chat.createA2aKey(name.trim());
      setCreated({ name: record.name, key });
      setName('');
      await keys.reload();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="a2a-keys-title">
      <h2 id="a2a-keys-title">A2A keys</h2>
      <p class="lead">
        Another agent sends tasks to this chat app with one of these keys, as you: its agent card is
        at <code>/.well-known/agent-card.json</code>. Revoke a key you no longer trust.
      </p>
      <ErrorNotice error={error ?? keys.error} />
      <form class="card editor" onSubmit={(event) => void create(event)} aria-label="New A2A key">
        <label>
          Name
          <input
            required
            maxLength={64}
            placeholder="research agent"
            aria-describedby="a2a-key-name-help"
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </label>
        <p id="a2a-key-name-help" class="help">
          What the key is for, so you know which one to revoke.
        </p>
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            Create key
          </button>
        </div>
      </form>
      {created && (
        <div class="card" role="status">
          <p>
            Your new key <strong>{created.name}</strong>. Copy it now: it is shown this once.
          </p>
          <label>
            Key
            <input readOnly value={created.key} onFocus={(event) => event.currentTarget.select()} />
          </label>
          <div class="form-actions">
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <div class="table-scroll">
        <table aria-busy={keys.loading}>
          <caption class="visually-hidden">Your A2A keys ({keys.data?.total ?? 0})</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data?.items.length === 0 && (
              <tr>
                <td colSpan={6}>No A2A keys yet.</td>
              </tr>
            )}
            {keys.data?.items.map((key) => (
              <tr key={String(key.id)}>
                <td>{key.name}</td>
                <td>
                  <code aria-label={`key ending in ${key.lastFour}`}>…{key.lastFour}</code>
                </td>
                <td>{when(key.createdAt)}</td>
                <td>{when(key.lastUsedAt)}</td>
                <td>{key.revokedAt ? `Revoked ${when(key.revokedAt)}` : 'Active'}</td>
                <td class="row-actions">
                  {!key.revokedAt && (
                    <button
                      type="button"
                      class="link-button danger"
                      onClick={() => setRevoking(key)}
                    >
                      Revoke<span class="visually-hidden"> {key.name}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {revoking && (
        <ConfirmDialog
          title={`Revoke the A2A key "${revoking.name}"?`}
          message="Agents using it are refused at once."
          confirm="Revoke key"
          onCancel={() => setRevoking(null)}
          onConfirm={() => {
            const target = revoking;
            setRevoking(null);
            void act(() => chat.revokeA2aKey(target.id), `"${target.name}" revoked.`);
          }}
        />
      )}
    </section>
  );
}
