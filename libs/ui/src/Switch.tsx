/** An on/off control: a checkbox with the switch role, named by its label. */
export function Switch(props: {
  checked: boolean;
  label: string;
  onChange: (checked: boolean) => void;
  disabled?: boolean;
  /** Shown next to the switch; `label` stays the accessible name. */
  text?: string;
}) {
  return (
    <label class="switch">
      <input
        type="checkbox"
        role="switch"
        checked={props.checked}
        disabled={props.disabled}
        aria-label={props.text ? props.label : undefined}
        onChange={(event) => props.onChange(event.currentTarget.checked)}
      />
      <span aria-hidden={props.text ? 'true' : undefined}>{props.text ?? props.label}</span>
    </label>
  );
}
