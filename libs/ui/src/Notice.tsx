import { type ComponentChildren } from 'preact';
import { asProblem } from './problem.js';

/**
 * A failure, announced to screen readers. `explain` turns the API's stable code into words
 * for the person looking (each app knows its own codes); the server's message is the fallback.
 */
export function ProblemNotice(props: {
  error: unknown;
  explain?: (code: string, status: number | undefined) => string | undefined;
  onDismiss?: () => void;
}) {
  if (props.error === null || props.error === undefined) return null;
  const problem = asProblem(props.error);
  const title = props.explain?.(problem.code, problem.status) ?? problem.message;
  return (
    <div class="notice notice-error" role="alert">
      <p class="notice-title">{title}</p>
      {title !== problem.message && <p class="notice-detail">{problem.message}</p>}
      {problem.fields && problem.fields.length > 0 && (
        <ul>
          {problem.fields.map((field) => (
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
