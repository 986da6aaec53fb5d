import { PURPOSES, type Platform, type Purpose } from '../api/types.js';

export const PURPOSE_LABELS: Record<Purpose, string> = {
  chat: 'Chat',
  drawing: 'Drawing',
  music: 'Music',
};

/** How a model's or an API key's platform is named on the admin pages. */
export const PLATFORM_LABELS: Record<Platform, string> = { openai: 'OpenAI-compatible' };

/** The purpose of a model or an API key record (docs/specification.md, "Chat upstream records"). */
export function PurposeField(props: { value: Purpose; onChange: (purpose: Purpose) => void }) {
  return (
    <label>
      Purpose
      <select
        value={props.value}
        onChange={(event) => props.onChange(event.currentTarget.value as Purpose)}
      >
        {PURPOSES.map((p) => (
          <option key={p} value={p}>
            {PURPOSE_LABELS[p]}
          </option>
        ))}
      </select>
    </label>
  );
}
