import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type ApiKeyRecord, type Purpose } from '../../api/types.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { PLATFORM_LABELS, PURPOSE_LABELS, PurposeField } from '../../components/PurposeField.js';
import {
  ConfirmDialog,
  DataTable,
  FormActions,
  RowButton,
  Switch,
  useAction,
  useLoad,
  useToast,
  type Column,
} from '@switchyard/ui';

export function ApiKeysPage() {
  const keys = useLoad(chat.listApiKeys, []);
  const [editing, setEditing] = useState<ApiKeyRecord | 'new' | null>(null);
  const notify = useToast();
  const [deleting, setDeleting] = useState<ApiKeyRecord | null>(null);
  const { act, error } = useAction(keys.reload);

  const columns: Column<ApiKeyRecord>[] = [
    { key: 'platform', header: 'Platform', render: (record) => PLATFORM_LABELS[record.platform] },
    {
      key: 'address',
      header: 'Address',
      render: (record) => (
        <>
          <code>{record.address}</code>
          {record.addressNormalized && (
            <div class="cell-note">
              Shortened to its base from a full endpoint address (before v4.1.1).
            </div>
          )}
        </>
      ),
    },
    {
      key: 'key',
      header: 'Key',
      render: (record) => (
        <code aria-label={`key ending in ${record.keyLastFour}`}>…{record.keyLastFour}</code>
      ),
    },
    { key: 'purpose', header: 'Purpose', render: (record) => PURPOSE_LABELS[record.purpose] },
    {
      key: 'enabled',
      header: 'Enabled',
      render: (record) => (
        <Switch
          checked={record.enabled}
          label={`Enabled: ${record.address} (${record.purpose})`}
          text={record.enabled ? 'On' : 'Off'}
          onChange={(enabled) =>
            void act(
              () => chat.updateApiKey(record.id, { enabled }),
              `${record.address} ${enabled ? 'enabled' : 'disabled'}.`,
            )
          }
        />
      ),
    },
    {
      key: 'actions',
      header: 'Actions',
      hiddenHeader: true,
      render: (record) => (
        <div class="row-actions">
          <RowButton action="Edit" row={record.address} onClick={() => setEditing(record)} />
          <RowButton
            action="Delete"
            row={record.address}
            onClick={() => setDeleting(record)}
            danger
          />
        </div>
      ),
    },
  ];

  return (
    <section aria-labelledby="api-keys-title">
      <div class="page-header">
        <h1 id="api-keys-title">API keys</h1>
        <button type="button" onClick={() => setEditing('new')}>
          Add API key
        </button>
      </div>
      <p class="lead">
        Upstream tokens from relays or from the gateway. Enabled keys of the same purpose are used
        in turn (round-robin); disable one that misbehaves and enable it again once it has
        recovered.
      </p>
      <ErrorNotice error={error ?? keys.error} />
      {editing && (
        <ApiKeyForm
          record={editing === 'new' ? null : editing}
          onCancel={() => setEditing(null)}
          onSaved={async (message) => {
            setEditing(null);
            await keys.reload();
            notify(message);
          }}
        />
      )}
      <DataTable
        caption={`API keys (${keys.data?.total ?? 0})`}
        columns={columns}
        rows={keys.data?.items}
        rowKey={(record) => record.id}
        loading={keys.loading}
        empty="No API keys yet: chat needs at least one."
      />
      {deleting && (
        <ConfirmDialog
          title={`Delete the API key for ${deleting.address}?`}
          message="Replies stop using this key at once."
          confirm="Delete API key"
          onCancel={() => setDeleting(null)}
          onConfirm={() => {
            const target = deleting;
            setDeleting(null);
            void act(() => chat.deleteApiKey(target.id), `${target.address} deleted.`);
          }}
        />
      )}
    </section>
  );
}

function ApiKeyForm(props: {
  record: ApiKeyRecord | null;
  onCancel: () => void;
  onSaved: (message: string) => Promise<void>;
}) {
  const existing = props.record;
  const [address, setAddress] = useState(existing?.address ?? '');
  const [key, setKey] = useState('');
  const [purpose, setPurpose] = useState<Purpose>(existing?.purpose ?? 'chat');
  const [enabled, setEnabled] = useState(existing?.enabled ?? true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const input = { platform: 'openai' as const, address: address.trim(), purpose, enabled };
    try {
      if (existing) {
        await chat.updateApiKey(existing.id, { ...input, ...(key !== '' ? { key } : {}) });
        await props.onSaved(`API key for ${input.address} saved.`);
      } else {
        await chat.createApiKey({ ...input, key });
        await props.onSaved(`API key for ${input.address} added.`);
      }
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
      aria-labelledby="api-key-form-title"
    >
      <h2 id="api-key-form-title">{existing ? 'Edit API key' : 'Add API key'}</h2>
      <ErrorNotice error={error} />
      <label>
        Platform
        <select value="openai" disabled aria-describedby="platform-help">
          <option value="openai">OpenAI-compatible</option>
        </select>
      </label>
      <p id="platform-help" class="help">
        Always this option for relay and gateway tokens, whatever platform runs behind them.
      </p>
      <label>
        Address
        <input
          type="url"
          required
          placeholder="https://relay.example.com"
          aria-describedby="address-help"
          value={address}
          onInput={(event) => setAddress(event.currentTarget.value)}
        />
      </label>
      <p id="address-help" class="help">
        The base address only. A full <code>…/v1/chat/completions</code> address from before v4.1.1
        is accepted and shortened to its base.
      </p>
      <label>
        Key
        <input
          type="password"
          autocomplete="off"
          required={!existing}
          placeholder={existing ? `Unchanged (ends in ${existing.keyLastFour})` : 'sk-…'}
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
      </label>
      <PurposeField value={purpose} onChange={setPurpose} />
      <Switch checked={enabled} label="Enabled" onChange={setEnabled} />
      <FormActions submit={existing ? 'Save' : 'Add'} busy={busy} onCancel={props.onCancel} />
    </form>
  );
}
