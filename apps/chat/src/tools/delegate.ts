// A remote agent as the tool loop sees it (docs/tools.md, A2A): one tool,
// `delegate_to_<agent>`, that hands the model's message to the agent and waits for its
// task to end. The A2A client behind it lives in apps/chat/src/a2a.

/** What the remote task is doing, streamed as `tool_progress` while the tool runs. */
export interface DelegateProgress {
  /** The protocol's task state, in lower case: submitted, working, … */
  state: string;
  /** The agent's status message, when it sent one. */
  message?: string;
}

/** Why a delegation failed, in the tool step's error codes. */
export class DelegationError extends Error {
  constructor(
    readonly code: 'server_unreachable' | 'tool_failed' | 'tool_timeout',
    message: string,
  ) {
    super(message);
    this.name = 'DelegationError';
  }
}

export interface Delegate {
  /** The agent's registered name: the step's `server`. */
  readonly agent: string;
  /** What the agent's card says it does, for the model. */
  readonly description: string;
  /** The agent's final answer; throws DelegationError. */
  delegate(
    message: string,
    signal: AbortSignal,
    progress: (update: DelegateProgress) => Promise<void>,
  ): Promise<string>;
}

/** The tool's name, as the model calls it. */
export function delegateToolName(agent: string): string {
  return `delegate_to_${agent}`;
}

/** What the model is told the tool does. */
export function delegateDescription(delegate: Delegate): string {
  return `Hand a task to the agent "${delegate.agent}" and get its answer. ${delegate.description}`.trim();
}

export const DELEGATE_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    message: {
      type: 'string',
      description: 'The task for the agent, in words: everything it needs to know',
    },
  },
  required: ['message'],
  additionalProperties: false,
} as const;
