/** A form's submit and cancel buttons; submit is disabled while the form is busy. */
export function FormActions(props: { submit: string; busy: boolean; onCancel: () => void }) {
  return (
    <div class="form-actions">
      <button type="submit" disabled={props.busy}>
        {props.submit}
      </button>
      <button type="button" class="secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}
