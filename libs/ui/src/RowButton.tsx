/**
 * A row's action as a link-styled button: it shows the action ("Edit") and says to screen
 * readers which row it acts on ("Edit relay-1"), since every row has one alike.
 */
export function RowButton(props: {
  action: string;
  row: string;
  onClick: () => void;
  danger?: boolean;
}) {
  return (
    <button
      type="button"
      class={props.danger ? 'link-button danger' : 'link-button'}
      onClick={props.onClick}
    >
      {props.action}
      <span class="visually-hidden"> {props.row}</span>
    </button>
  );
}
