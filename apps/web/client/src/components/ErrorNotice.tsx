import { asProblem } from '@switchyard/ui';
import { Link } from '@switchyard/ui';
import { client } from '../api/client.js';

/** A failure, said plainly, with what to do about it. Announced to screen readers. */
export function ErrorNotice(props: { error: unknown; onDismiss?: () => void }) {
  if (props.error === null || props.error === undefined) return null;
  const problem = asProblem(props.error);
  const explanation = client.explain(problem);
  const shortfall = problem.code === 'insufficient_credits';
  return (
    <div class="notice notice-error" role="alert">
      <p class="notice-title">{explanation.title}</p>
      {explanation.address && (
        <p>
          Provider address: <code>{explanation.address}</code>
        </p>
      )}
      {shortfall && problem.details && (
        <>
          <p class="credit-shortfall">
            Your balance: <strong>{problem.details['balance']}</strong> credits. This message may
            cost up to <strong>{problem.details['price']}</strong> credits; what it does not use is
            returned.
          </p>
          {/* The hint's advice with the redeem link in it, said once (not hint and link). */}
          <p>
            <Link href="/credits">Redeem a code</Link>, pick a cheaper or free model, or ask an
            administrator.
          </p>
        </>
      )}
      {explanation.hint && !(shortfall && problem.details) && <p>{explanation.hint}</p>}
      {explanation.fields && (
        <ul>
          {explanation.fields.map((field) => (
            <li key={`${field.field}:${field.message}`}>{field.message}</li>
          ))}
        </ul>
      )}
      {explanation.detail && !explanation.fields && !problem.details && (
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
