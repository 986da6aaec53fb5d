import { type ComponentChildren } from 'preact';
import { explain as explainIn, type Explanation } from './explain.js';

/**
 * A failure, announced to screen readers. `explain` (the app's API client's) turns the API's
 * stable code into words for the person looking; the server's message is the fallback.
 */
export function ProblemNotice(props: {
  error: unknown;
  explain?: (error: unknown) => Explanation;
  onDismiss?: () => void;
}) {
  if (props.error === null || props.error === undefined) return null;
  const explanation = (props.explain ?? plainly)(props.error);
  return (
    <div class="notice notice-error" role="alert">
      <p class="notice-title">{explanation.title}</p>
      {explanation.hint && <p>{explanation.hint}</p>}
      {explanation.detail && <p class="notice-detail">{explanation.detail}</p>}
      {explanation.fields && (
        <ul>
          {explanation.fields.map((field) => (
            <li key={`${field.field}:${field.message}`}>{field.message}</li>
          ))}
        </ul>
      )}
      {props.onDismiss && (
        <button type="button" class="link-button" onClick={props.onDismiss}>
          Dismiss
        </button>
      )}
    </div>
  );
}

const plainly = (error: unknown): Explanation => explainIn(error, { codes: {} });

/** Nothing to show yet, said plainly, with what to do about it. */
export function EmptyState(props: { children: ComponentChildren }) {
  return <p class="table-state">{props.children}</p>;
}

export function Loading(props: { what?: string }) {
  return (
    <p class="table-state" role="status">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  );
}
