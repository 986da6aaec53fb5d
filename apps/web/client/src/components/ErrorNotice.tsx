import { asProblem } from '@switchyard/ui';
import { client } from '../api/client.js';

/** A failure, said plainly, with what to do about it. Announced to screen readers. */
export function ErrorNotice(props: { error: unknown; onDismiss?: () => void }) {
  if (props.error === null || props.error === undefined) return null;
  const problem = asProblem(props.error);
  const explanation = client.explain(problem);
  return (
    <div class="notice notice-error" role="alert">
      <p class="notice-title">{explanation.title}</p>
      {explanation.address && (
        <p>
          Provider address: <code>{explanation.address}</code>
        </p>
      )}
      {explanation.hint && <p>{explanation.hint}</p>}
      {explanation.fields && (
        <ul>
          {explanation.fields.map((field) => (
            <li key={`${field.field}:${field.message}`}>{field.message}</li>
          ))}
        </ul>
      )}
      {explanation.detail && !explanation.fields && (
        <p class="notice-detail">
          Details: {explanation.detail} <span class="code">({problem.code})</span>
        </p>
      )}
      {props.onDismiss && (
        <button type="button" class="link-button" onClick={props.onDismiss}>
          Dismiss
        </button>
      )}
    </div>
  );
}
