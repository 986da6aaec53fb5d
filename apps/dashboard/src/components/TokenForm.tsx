import { Dialog, ProblemNotice, SelectField, TextField, fieldErrors } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { dollarsToMicros, listOf, microsToDollars, toNumberOrNull } from '../format.js';
import { useTeamOptions } from './teamOptions.js';

type Token = Schemas['TokenResponse'];
export type Created = Schemas['CreatedTokenResponse'][];

/** `datetime-local` wants local time without a zone. */
function localInput(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** Creates a token (or the three-token bundle), or changes one. */
export function TokenForm(props: {
  token: Token | null;
  onClose: () => void;
  onCreated: (created: Created) => void;
  onSaved: (token: Token) => Promise<void>;
}) {
  const existing = props.token;
  const [name, setName] = useState(existing?.name ?? '');
  const [unlimited, setUnlimited] = useState(existing ? existing.quota === null : true);
  const [quota, setQuota] = useState(existing?.quota ? microsToDollars(existing.quota) : '10');
  const [never, setNever] = useState(existing ? existing.expiresAt === null : true);
  const [expiresAt, setExpiresAt] = useState(localInput(existing?.expiresAt ?? null));
  const [models, setModels] = useState(existing?.models.join(', ') ?? '');
  const [allowIps, setAllowIps] = useState(existing?.allowIps.join(', ') ?? '');
  const [group, setGroup] = useState(existing?.group ?? 'default');
  const [rateLimit, setRateLimit] = useState(
    existing?.rateLimit === null || existing?.rateLimit === undefined
      ? ''
      : String(existing.rateLimit),
  );
  const [teamId, setTeamId] = useState(existing?.teamId ? String(existing.teamId) : '');
  const teams = useTeamOptions("None (the operator's)");
  const [shape, setShape] = useState<'one' | 'bundle'>('one');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      name: name.trim(),
      quota: unlimited ? null : dollarsToMicros(quota),
      expiresAt: never || expiresAt === '' ? null : new Date(expiresAt).toISOString(),
      models: listOf(models),
      allowIps: listOf(allowIps),
      group: group.trim(),
      rateLimit: toNumberOrNull(rateLimit),
      teamId: teamId === '' ? null : Number(teamId),
    };
    try {
      if (existing) {
        const saved = await call(
          api.PATCH('/api/tokens/{id}', {
            params: { path: { id: existing.id } },
            body: { ...body, version: existing.version },
          }),
        );
        await props.onSaved(saved);
      } else if (shape === 'bundle') {
        const bundle = await call(api.POST('/api/tokens/bundle', { body }));
        props.onCreated([bundle.chat, bundle.imageModel, bundle.imageService]);
      } else {
        props.onCreated([await call(api.POST('/api/tokens', { body }))]);
      }
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={existing ? `Edit ${existing.name}` : 'Create token'} onClose={props.onClose}>
      <form class="editor" onSubmit={(event) => void submit(event)}>
        <ProblemNotice error={error} explain={explain} />
        {!existing && (
          <SelectField
            label="Create"
            value={shape}
            onChange={(value) => setShape(value as 'one' | 'bundle')}
            options={[
              { value: 'one', label: 'One token' },
              {
                value: 'bundle',
                label: 'The bundle for a chat installation (chat, drawing, image service)',
              },
            ]}
          />
        )}
        <TextField label="Name" value={name} onInput={setName} required error={fields.name} />
        <fieldset>
          <legend>Quota</legend>
          <label class="check">
            <input
              type="checkbox"
              checked={unlimited}
              onChange={(event) => setUnlimited(event.currentTarget.checked)}
            />
            Unlimited
          </label>
          {!unlimited && (
            <TextField
              label="Quota in US dollars"
              type="number"
              value={quota}
              onInput={setQuota}
              error={fields.quota}
            />
          )}
        </fieldset>
        <fieldset>
          <legend>Expiry</legend>
          <label class="check">
            <input
              type="checkbox"
              checked={never}
              onChange={(event) => setNever(event.currentTarget.checked)}
            />
            Never expires
          </label>
          {!never && (
            <TextField
              label="Expires at"
              type="datetime-local"
              value={expiresAt}
              onInput={setExpiresAt}
              error={fields.expiresAt}
            />
          )}
        </fieldset>
        <TextField
          label="Models (comma-separated; empty: all)"
          value={models}
          onInput={setModels}
          error={fields.models}
        />
        <TextField
          label="Allowed IP addresses or CIDRs (comma-separated; empty: any)"
          value={allowIps}
          onInput={setAllowIps}
          error={fields.allowIps}
        />
        <div class="form-grid">
          <TextField label="Group" value={group} onInput={setGroup} error={fields.group} />
          <TextField
            label="Requests per minute (empty: no limit)"
            type="number"
            min={1}
            value={rateLimit}
            onInput={setRateLimit}
            error={fields.rateLimit}
          />
        </div>
        {!existing?.ownerId && (
          <SelectField
            label="Team that pays"
            value={teamId}
            onChange={setTeamId}
            options={teams}
            error={fields.teamId}
          />
        )}
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            {existing ? 'Save token' : shape === 'bundle' ? 'Create bundle' : 'Create token'}
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The new token's value, shown this once, with ready-made calls against this gateway. */
export function CreatedTokens(props: { created: Created; onClose: () => void }) {
  const base = `${location.origin}/v1`;
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async (token: Schemas['CreatedTokenResponse']) => {
    try {
      await navigator.clipboard.writeText(token.key);
      setCopied(`The value of ${token.name} is on the clipboard.`);
    } catch {
      setCopied('The browser refused the clipboard: select the value and copy it by hand.');
    }
  };
  const [first] = props.created;
  return (
    <Dialog
      title={props.created.length > 1 ? 'Tokens created' : 'Token created'}
      onClose={props.onClose}
    >
      <p>
        <strong>Copy the value now:</strong> it is shown only this once. Only its last four
        characters are kept for display.
      </p>
      {props.created.map((token) => (
        <div key={token.id}>
          <h3>{token.name}</h3>
          <code class="secret" aria-label={`Value of ${token.name}`}>
            {token.key}
          </code>
          <button type="button" onClick={() => void copy(token)}>
            Copy<span class="visually-hidden"> the value of {token.name}</span>
          </button>
        </div>
      ))}
      <p role="status">{copied}</p>
      {first && (
        <details>
          <summary>How to call the gateway with it</summary>
          <h3>curl</h3>
          <pre class="snippet" tabIndex={0}>
            {`curl ${base}/chat/completions \\
  -H "Authorization: Bearer ${first.key}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello"}]}'`}
          </pre>
          <h3>Python (openai)</h3>
          <pre class="snippet" tabIndex={0}>
            {`from openai import OpenAI

client = OpenAI(base_url="${base}", api_key="${first.key}")
reply = client.chat.completions.create(
    model="gpt-4o-mini",
    messages=[{"role": "user", "content": "Hello"}],
)
print(reply.choices[0].message.content)`}
          </pre>
          <h3>JavaScript (openai)</h3>
          <pre class="snippet" tabIndex={0}>
            {`import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${base}', apiKey: '${first.key}' });
const reply = await client.chat.completions.create({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Hello' }],
});
console.log(reply.choices[0].message.content);`}
          </pre>
        </details>
      )}
      <div class="form-actions">
        <button type="button" class="secondary" onClick={props.onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
