// What one tool step of a reply was: sent to the browser as SSE events and saved with the
// assistant message (docs/tools.md).

/** `delegate`: a task handed to a remote A2A agent. */
export type ToolStepKind = 'tool' | 'resource' | 'connect' | 'delegate';

export type ToolErrorCode =
  'server_unreachable' | 'unknown_tool' | 'invalid_arguments' | 'tool_timeout' | 'tool_failed';

/** A call as the model asked for it, before it runs. */
export interface ToolCallRequest {
  /** The model's call id (native mode), or one of ours (prompt mode). */
  id: string;
  kind: 'tool' | 'resource' | 'delegate';
  server: string;
  /** The tool's name (kind `tool`). */
  tool?: string;
  /** The resource (kind `resource`). */
  uri?: string;
  /** Parsed arguments, or the raw text when it was not a JSON object. */
  arguments?: unknown;
}

export interface ToolStep {
  id: string;
  kind: ToolStepKind;
  server: string;
  tool?: string;
  uri?: string;
  arguments?: unknown;
  ok: boolean;
  /** The text the model was given back. */
  result?: string;
  error?: { code: ToolErrorCode; message: string };
  durationMs: number;
}

/** What goes back to the model: the result, or the error in words it can act on. */
export function resultForModel(step: ToolStep): string {
  if (step.ok) return step.result ?? '';
  return `Error (${step.error?.code ?? 'tool_failed'}): ${step.error?.message ?? 'failed'}`;
}
