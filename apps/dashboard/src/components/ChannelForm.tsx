import { Dialog, ProblemNotice, SelectField, TextField, fieldErrors } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { listOf, toNumberOrNull } from '../format.js';

type Channel = Schemas['ChannelResponse'];

/** `requested=upstream` per line, as the API's model mapping. */
function parseMapping(text: string): Record<string, string> {
  const mapping: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const [from, to] = line.split('=').map((part) => part.trim());
    if (from && to) mapping[from] = to;
  }
  return mapping;
}

function mappingText(mapping: Record<string, string>): string {
  return Object.entries(mapping)
    .map(([from, to]) => `${from}=${to}`)
    .join('\n');
}

type Provider = Schemas['ChannelProvider'];
type ProviderSettings = Schemas['ProviderSettingsDto'];

const PROVIDERS: { value: Provider; label: string }[] = [
  { value: 'openai', label: 'OpenAI-compatible (OpenAI, DeepSeek, OpenRouter, vLLM, relays…)' },
  { value: 'anthropic', label: 'Anthropic' },
  { value: 'azure', label: 'Azure OpenAI' },
  { value: 'gemini', label: 'Google Gemini' },
  { value: 'bedrock', label: 'AWS Bedrock' },
];

/** The one setting a provider needs besides its base URL and keys (docs/providers.md). */
const PROVIDER_SETTING: Partial<
  Record<
    Provider,
    { name: keyof ProviderSettings; label: string; placeholder: string; required?: boolean }
  >
> = {
  anthropic: { name: 'anthropicVersion', label: 'Anthropic version', placeholder: '2023-06-01' },
  azure: { name: 'apiVersion', label: 'Azure API version', placeholder: '2024-10-21' },
  bedrock: { name: 'region', label: 'AWS region', placeholder: 'us-east-1', required: true },
};

/** Where a provider's API lives, as the base URL field suggests it. */
const BASE_URL_PLACEHOLDER: Partial<Record<Provider, string>> = {
  anthropic: 'https://api.anthropic.com',
  azure: 'https://my-resource.openai.azure.com',
  gemini: 'https://generativelanguage.googleapis.com',
  bedrock: 'https://bedrock-runtime.us-east-1.amazonaws.com',
};

function limitText(value: number | null | undefined): string {
  return value === null || value === undefined ? '' : String(value);
}

/** Creates a channel or changes one: every field the API takes. */
export function ChannelForm(props: {
  channel: Channel | null;
  onClose: () => void;
  onSaved: (channel: Channel) => Promise<void>;
}) {
  const existing = props.channel;
  const [name, setName] = useState(existing?.name ?? '');
  const [kind, setKind] = useState<Schemas['ChannelKind']>(existing?.kind ?? 'single');
  const [provider, setProvider] = useState<Provider>(existing?.provider ?? 'openai');
  const [setting, setSetting] = useState(() => {
    const own = PROVIDER_SETTING[existing?.provider ?? 'openai'];
    return own ? (existing?.providerSettings[own.name] ?? '') : '';
  });
  const [baseUrl, setBaseUrl] = useState(existing?.baseUrl ?? '');
  const [keys, setKeys] = useState('');
  const [models, setModels] = useState(existing?.models.join('\n') ?? '');
  const [mapping, setMapping] = useState(mappingText(existing?.modelMapping ?? {}));
  const [priority, setPriority] = useState(String(existing?.priority ?? 0));
  const [weight, setWeight] = useState(String(existing?.weight ?? 1));
  const [groups, setGroups] = useState(existing?.groups.join(', ') ?? 'default');
  const [rpm, setRpm] = useState(limitText(existing?.limits.rpm));
  const [tpm, setTpm] = useState(limitText(existing?.limits.tpm));
  const [concurrency, setConcurrency] = useState(limitText(existing?.limits.concurrency));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [fetched, setFetched] = useState<string | null>(null);
  const fields = fieldErrors(error);

  const fetchModels = async () => {
    setError(null);
    setFetched(null);
    const [firstKey] = listOf(keys.replace(/,/g, '\n'));
    try {
      const answer =
        existing && !firstKey
          ? await call(
              api.POST('/api/channels/{id}/upstream-models', {
                params: { path: { id: existing.id } },
              }),
            )
          : await call(
              api.POST('/api/channels/upstream-models', {
                body: {
                  baseUrl: baseUrl.trim(),
                  key: firstKey ?? '',
                  provider,
                  providerSettings: providerSettings(),
                },
              }),
            );
      if (!answer.ok) {
        setFetched(
          `The upstream answered ${answer.status ?? 'nothing'}: ${answer.error?.message ?? 'no models'}`,
        );
        return;
      }
      const merged = [...new Set([...listOf(models), ...answer.models])];
      setModels(merged.join('\n'));
      setFetched(
        `${answer.models.length} models fetched from the upstream (${answer.latencyMs} ms).`,
      );
    } catch (failure) {
      setError(failure);
    }
  };

  const providerSettings = (): ProviderSettings => {
    const own = PROVIDER_SETTING[provider];
    return own && setting.trim() !== '' ? { [own.name]: setting.trim() } : {};
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      name: name.trim(),
      kind,
      provider,
      providerSettings: providerSettings(),
      baseUrl: baseUrl.trim(),
      models: listOf(models),
      modelMapping: parseMapping(mapping),
      priority: Number(priority),
      weight: Number(weight),
      groups: listOf(groups),
      limits: {
        rpm: toNumberOrNull(rpm),
        tpm: toNumberOrNull(tpm),
        concurrency: toNumberOrNull(concurrency),
      },
    };
    const keyList = keys
      .split('\n')
      .map((key) => key.trim())
      .filter((key) => key !== '');
    try {
      const saved = existing
        ? await call(
            api.PATCH('/api/channels/{id}', {
              params: { path: { id: existing.id } },
              body: {
                ...body,
                version: existing.version,
                ...(keyList.length > 0 ? { keys: keyList } : {}),
              },
            }),
          )
        : await call(api.POST('/api/channels', { body: { ...body, keys: keyList } }));
      await props.onSaved(saved);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={existing ? `Edit ${existing.name}` : 'Add channel'} onClose={props.onClose}>
      <form class="editor" onSubmit={(event) => void submit(event)}>
        <ProblemNotice error={error} explain={explain} />
        <div class="form-grid">
          <TextField label="Name" value={name} onInput={setName} required error={fields.name} />
          <SelectField
            label="Kind"
            value={kind}
            onChange={(value) => setKind(value as Schemas['ChannelKind'])}
            options={[
              { value: 'single', label: 'Single account' },
              { value: 'aggregated', label: 'Aggregated (a relay pooling many)' },
            ]}
            error={fields.kind}
          />
          <SelectField
            label="Provider"
            value={provider}
            onChange={(value) => {
              setProvider(value as Provider);
              setSetting('');
            }}
            options={PROVIDERS}
            error={fields.provider}
          />
          {PROVIDER_SETTING[provider] && (
            <TextField
              label={PROVIDER_SETTING[provider].label}
              value={setting}
              onInput={setSetting}
              placeholder={PROVIDER_SETTING[provider].placeholder}
              required={PROVIDER_SETTING[provider].required === true}
              hint={
                PROVIDER_SETTING[provider].required
                  ? 'Requests are signed for this region.'
                  : "Empty: the gateway's default."
              }
              error={fields[`providerSettings.${PROVIDER_SETTING[provider].name}`]}
            />
          )}
        </div>
        <TextField
          label="Base URL"
          type="url"
          value={baseUrl}
          onInput={setBaseUrl}
          required
          placeholder={BASE_URL_PLACEHOLDER[provider] ?? 'https://api.example.com'}
          error={fields.baseUrl}
        />
        <TextField
          label={existing ? 'Replace keys (one per line)' : 'Keys (one per line)'}
          multiline
          rows={3}
          value={keys}
          onInput={setKeys}
          required={!existing}
          {...(provider === 'bedrock'
            ? { placeholder: 'ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]' }
            : {})}
          hint={`${
            provider === 'bedrock'
              ? 'One AWS access key pair per line, ACCESS_KEY_ID:SECRET_ACCESS_KEY, with :SESSION_TOKEN for temporary credentials. '
              : ''
          }${
            existing
              ? `Leave empty to keep the ${existing.keys.length} current keys. Keys already there keep their statistics.`
              : 'Stored encrypted; only their last four characters are shown again.'
          }`}
          error={fields.keys}
        />
        <TextField
          label="Models (one per line; a name ending in * serves a prefix)"
          multiline
          rows={4}
          value={models}
          onInput={setModels}
          required
          error={fields.models}
        />
        <div>
          <button type="button" class="secondary" onClick={() => void fetchModels()}>
            Fetch models from upstream
          </button>
          <p role="status" class="help">
            {fetched}
          </p>
        </div>
        <TextField
          label="Model mapping (requested=sent upstream, one per line)"
          multiline
          rows={2}
          value={mapping}
          onInput={setMapping}
          error={fields.modelMapping}
        />
        <div class="form-grid">
          <TextField
            label="Priority (higher first)"
            type="number"
            value={priority}
            onInput={setPriority}
            error={fields.priority}
          />
          <TextField
            label="Weight"
            type="number"
            min={0}
            value={weight}
            onInput={setWeight}
            error={fields.weight}
          />
          <TextField
            label="Groups (comma-separated)"
            value={groups}
            onInput={setGroups}
            error={fields.groups}
          />
        </div>
        <fieldset>
          <legend>Limits per key (empty: none)</legend>
          <div class="form-grid">
            <TextField
              label="Requests per minute"
              type="number"
              min={1}
              value={rpm}
              onInput={setRpm}
              error={fields['limits.rpm']}
            />
            <TextField
              label="Tokens per minute"
              type="number"
              min={1}
              value={tpm}
              onInput={setTpm}
              error={fields['limits.tpm']}
            />
            <TextField
              label="Requests at once"
              type="number"
              min={1}
              value={concurrency}
              onInput={setConcurrency}
              error={fields['limits.concurrency']}
            />
          </div>
        </fieldset>
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            {existing ? 'Save channel' : 'Create channel'}
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
