import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type AdminModel, type Purpose } from '../../api/types.js';
import { priceLabel } from '../../components/credit-price.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { PLATFORM_LABELS, PURPOSE_LABELS, PurposeField } from '../../components/PurposeField.js';
import {
  ConfirmDialog,
  DataTable,
  FormActions,
  RowButton,
  Switch,
  TextField,
  fieldErrors,
  useAction,
  useLoad,
  useToast,
  type Column,
} from '@switchyard/ui';

export function ModelsPage() {
  const models = useLoad(chat.listAdminModels, []);
  const [editing, setEditing] = useState<AdminModel | 'new' | null>(null);
  const notify = useToast();
  const [deleting, setDeleting] = useState<AdminModel | null>(null);
  const { act, error } = useAction(models.reload);

  const columns: Column<AdminModel>[] = [
    { key: 'name', header: 'Name', render: (model) => <code>{model.name}</code> },
    { key: 'platform', header: 'Platform', render: (model) => PLATFORM_LABELS[model.platform] },
    { key: 'purpose', header: 'Purpose', render: (model) => PURPOSE_LABELS[model.purpose] },
    { key: 'price', header: 'Price (credits)', render: (model) => priceLabel(model) },
    { key: 'vision', header: 'Images', render: (model) => (model.vision ? 'Reads images' : 'No') },
    {
      key: 'open',
      header: 'Open to all',
      render: (model) => (
        <Switch
          checked={model.open}
          label={`Open ${model.name} to all users`}
          text={model.open ? 'Open' : 'Closed'}
          onChange={(open) =>
            void act(
              () => chat.updateModel(model.id, { open }),
              `${model.name} is now ${open ? 'open to all users' : 'limited to permitted users'}.`,
            )
          }
        />
      ),
    },
    {
      key: 'actions',
      header: 'Actions',
      hiddenHeader: true,
      render: (model) => (
        <div class="row-actions">
          <RowButton action="Edit" row={model.name} onClick={() => setEditing(model)} />
          <RowButton action="Delete" row={model.name} onClick={() => setDeleting(model)} danger />
        </div>
      ),
    },
  ];

  return (
    <section aria-labelledby="models-title">
      <div class="page-header">
        <h1 id="models-title">Models</h1>
        <button type="button" onClick={() => setEditing('new')}>
          Add model
        </button>
      </div>
      <p class="lead">
        An open model is offered to every user; a closed one only to users who hold its permission
        (Users → permissions).
      </p>
      <ErrorNotice error={error ?? models.error} />
      {editing && (
        <ModelForm
          model={editing === 'new' ? null : editing}
          onCancel={() => setEditing(null)}
          onSaved={async (message) => {
            setEditing(null);
            await models.reload();
            notify(message);
          }}
        />
      )}
      <DataTable
        caption={`Models (${models.data?.total ?? 0})`}
        columns={columns}
        rows={models.data?.items}
        rowKey={(model) => model.id}
        loading={models.loading}
        empty="No models yet."
      />
      {deleting && (
        <ConfirmDialog
          title={`Delete the model ${deleting.name}?`}
          message="Users can no longer choose it; their conversations keep its name."
          confirm="Delete model"
          onCancel={() => setDeleting(null)}
          onConfirm={() => {
            const target = deleting;
            setDeleting(null);
            void act(() => chat.deleteModel(target.id), `${target.name} deleted.`);
          }}
        />
      )}
    </section>
  );
}

function ModelForm(props: {
  model: AdminModel | null;
  onCancel: () => void;
  onSaved: (message: string) => Promise<void>;
}) {
  const existing = props.model;
  const [name, setName] = useState(existing?.name ?? '');
  const [purpose, setPurpose] = useState<Purpose>(existing?.purpose ?? 'chat');
  const [open, setOpen] = useState(existing?.open ?? false);
  const [vision, setVision] = useState(existing?.vision ?? false);
  const [toolMode, setToolMode] = useState<AdminModel['toolMode']>(existing?.toolMode ?? 'off');
  const [context, setContext] = useState(
    existing?.contextTokens == null ? '' : String(existing.contextTokens),
  );
  const [perCall, setPerCall] = useState(String(existing?.creditsPerCall ?? 0));
  const [perInput, setPerInput] = useState(String(existing?.creditsPer1kInput ?? 0));
  const [perOutput, setPerOutput] = useState(String(existing?.creditsPer1kOutput ?? 0));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    // Empty means 0; anything else goes as typed, so the API names a bad value.
    const credits = (value: string) => (value.trim() === '' ? 0 : Number(value));
    const input = {
      platform: 'openai' as const,
      name: name.trim(),
      purpose,
      open,
      toolMode,
      // Empty: the size is unknown, and the chat does not warn.
      contextTokens: context.trim() === '' ? null : Number(context),
      vision,
      creditsPerCall: credits(perCall),
      creditsPer1kInput: credits(perInput),
      creditsPer1kOutput: credits(perOutput),
    };
    try {
      if (existing) await chat.updateModel(existing.id, input);
      else await chat.createModel(input);
      await props.onSaved(`${input.name} ${existing ? 'saved' : 'added'}.`);
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
      aria-labelledby="model-form-title"
    >
      <h2 id="model-form-title">{existing ? 'Edit model' : 'Add model'}</h2>
      <ErrorNotice error={error} />
      <label>
        Platform
        <select value="openai" disabled>
          <option value="openai">OpenAI-compatible</option>
        </select>
      </label>
      <label>
        Model name
        <input
          required
          aria-describedby="model-name-help"
          placeholder="gpt-4o"
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
      </label>
      <p id="model-name-help" class="help">
        Reverse-engineered models end in <code>-all</code>; custom assistants are the
        custom-assistant prefix followed by their <code>g-…</code> id.
      </p>
      <PurposeField value={purpose} onChange={setPurpose} />
      <label>
        Tools
        <select
          value={toolMode}
          onChange={(event) => setToolMode(event.currentTarget.value as AdminModel['toolMode'])}
        >
          <option value="off">Off</option>
          <option value="native">Native (function calling)</option>
          <option value="prompt">In the prompt (any model)</option>
        </select>
      </label>
      <label>
        Context window (tokens)
        <input
          type="number"
          min={1}
          step={1}
          inputMode="numeric"
          aria-describedby="model-context-help"
          placeholder="128000"
          value={context}
          onInput={(event) => setContext(event.currentTarget.value)}
        />
      </label>
      <p id="model-context-help" class="help">
        Users are warned as a conversation nears it. Empty: unknown, no warning.
      </p>
      <fieldset>
        <legend>Price in credits</legend>
        <p class="help">
          Whole credits, 0 to 1,000,000. All three 0: the model is free. Drawing and music models
          are usually priced per call, chat models per thousand tokens.
        </p>
        <TextField
          label="Per call"
          type="number"
          min={0}
          value={perCall}
          onInput={setPerCall}
          error={fields['creditsPerCall']}
        />
        <TextField
          label="Per 1,000 input tokens"
          type="number"
          min={0}
          value={perInput}
          onInput={setPerInput}
          error={fields['creditsPer1kInput']}
        />
        <TextField
          label="Per 1,000 output tokens"
          type="number"
          min={0}
          value={perOutput}
          onInput={setPerOutput}
          error={fields['creditsPer1kOutput']}
        />
      </fieldset>
      <Switch checked={vision} label="Reads images" onChange={setVision} />
      <p class="help">
        On: users may attach PNG, JPEG, WebP or GIF images to their messages to this model.
      </p>
      <Switch checked={open} label="Open to all users" onChange={setOpen} />
      <FormActions submit={existing ? 'Save' : 'Add'} busy={busy} onCancel={props.onCancel} />
    </form>
  );
}
