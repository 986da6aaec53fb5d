import { useState } from 'preact/hooks';
import * as chat from '../api/chat-api.js';
import { type ChatModel, type Preferences, type Purpose } from '../api/types.js';
import { priceLabel } from './credit-price.js';
import { ErrorNotice } from './ErrorNotice.js';

const GROUPS: { purpose: Purpose; label: string }[] = [
  { purpose: 'chat', label: 'Chat' },
  { purpose: 'drawing', label: 'Drawing' },
  { purpose: 'music', label: 'Music' },
];

export function ModelPicker(props: {
  models: ChatModel[];
  value: string;
  onChange: (name: string) => void;
  onCustomAdded: (preferences: Preferences) => void;
  disabled?: boolean;
}) {
  const [link, setLink] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const known = props.models.some((model) => model.name === props.value);

  const addFromLink = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      props.onCustomAdded(await chat.addCustomAssistant(link.trim()));
      setLink('');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="model-picker">
      <label>
        Model
        <select
          value={props.value}
          disabled={props.disabled}
          onChange={(event) => props.onChange(event.currentTarget.value)}
        >
          {!known && props.value !== '' && (
            <option value={props.value}>{props.value} (not in your list)</option>
          )}
          {props.value === '' && <option value="">Choose a model</option>}
          {GROUPS.map((group) => {
            const models = props.models.filter((model) => model.purpose === group.purpose);
            return models.length === 0 ? null : (
              <optgroup key={group.purpose} label={group.label}>
                {models.map((model) => (
                  <option key={String(model.id)} value={model.name}>
                    {model.name}
                    {model.custom ? ' (custom assistant)' : ` — ${priceLabel(model)}`}
                  </option>
                ))}
              </optgroup>
            );
          })}
        </select>
      </label>
      <details class="custom-assistant">
        <summary>Add a custom assistant from its link</summary>
        <form onSubmit={(event) => void addFromLink(event)}>
          <label>
            Public link of the assistant
            <input
              type="url"
              required
              placeholder="https://chatgpt.com/g/g-…"
              value={link}
              onInput={(event) => setLink(event.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy}>
            Add
          </button>
          <ErrorNotice error={error} />
        </form>
      </details>
    </div>
  );
}
