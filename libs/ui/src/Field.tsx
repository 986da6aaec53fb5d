import { type ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

/**
 * A labelled text input with its hint and its error from the API (`fields`), tied to the
 * input through aria-describedby so a screen reader reads both.
 */
export function TextField(props: {
  label: string;
  value: string;
  onInput: (value: string) => void;
  error?: string | undefined;
  hint?: ComponentChildren;
  type?: 'text' | 'password' | 'number' | 'url' | 'search' | 'datetime-local' | 'date';
  required?: boolean;
  autoComplete?: string;
  placeholder?: string;
  multiline?: boolean;
  rows?: number;
  disabled?: boolean;
  min?: number;
}) {
  const id = useId();
  const described = [props.hint ? `${id}-hint` : '', props.error ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ');
  const shared = {
    id,
    value: props.value,
    required: props.required,
    disabled: props.disabled,
    placeholder: props.placeholder,
    'aria-invalid': props.error ? ('true' as const) : undefined,
    'aria-describedby': described || undefined,
  };
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.multiline ? (
        <textarea
          {...shared}
          rows={props.rows ?? 4}
          onInput={(event) => props.onInput(event.currentTarget.value)}
        />
      ) : (
        <input
          {...shared}
          // Preact types each input type apart; one field serves several. tsc needs the
          // assertion, which the lint rule cannot see through Preact's per-type props.
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
          type={(props.type ?? 'text') as 'text'}
          min={props.min}
          autoComplete={props.autoComplete}
          onInput={(event) => props.onInput(event.currentTarget.value)}
        />
      )}
      {props.hint && (
        <p class="help" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

/** A labelled select. */
export function SelectField(props: {
  label: string;
  value: string;
  options: { value: string; label: string }[];
  onChange: (value: string) => void;
  error?: string | undefined;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={props.error ? `${id}-error` : undefined}
        onChange={(event) => props.onChange(event.currentTarget.value)}
      >
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      {props.error && (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}
