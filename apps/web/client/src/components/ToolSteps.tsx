import { type ToolStep } from '../api/types.js';

// The tool calls behind a reply, each a collapsible step: what was called with which
// arguments, and what came back or went wrong, and how long it took (docs/tools.md).

function titleOf(step: ToolStep): string {
  if (step.kind === 'connect') return `${step.server}: not reachable`;
  if (step.kind === 'resource') return `${step.server}: read ${step.uri ?? ''}`;
  if (step.kind === 'delegate') return `${step.server}: task handed to this agent`;
  return `${step.server}: ${step.tool ?? ''}`;
}

function json(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

export function ToolSteps(props: { steps: ToolStep[] }) {
  if (props.steps.length === 0) return null;
  return (
    <ol class="tool-steps" aria-label="Tool steps">
      {props.steps.map((step) => (
        <li key={step.id} class={`tool-step ${step.ok ? 'tool-step-ok' : 'tool-step-failed'}`}>
          <details>
            <summary>
              {titleOf(step)} — {step.ok ? 'done' : (step.error?.code ?? 'failed')} (
              {step.durationMs} ms)
            </summary>
            {step.arguments !== undefined && (
              <>
                <p class="tool-step-label">Arguments</p>
                <pre>{json(step.arguments)}</pre>
              </>
            )}
            <p class="tool-step-label">{step.ok ? 'Result' : 'Error'}</p>
            <pre>{step.ok ? (step.result ?? '') : (step.error?.message ?? '')}</pre>
          </details>
        </li>
      ))}
    </ol>
  );
}
