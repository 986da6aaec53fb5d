import { randomUUID } from 'node:crypto';
import {
  SendMessageRequest,
  TaskState,
  taskStateToJSON,
  type AgentCard,
  type Part,
} from '@a2a-js/sdk';
import { redactSecrets } from '@switchyard/observability';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { DelegationError, type Delegate, type DelegateProgress } from '../tools/delegate.js';

// One remote A2A agent, reached with the SDK's client over JSON-RPC: its card is read
// when the agent is opened, and each delegation is one streamed `SendStreamingMessage`
// whose task states are passed on as progress (docs/tools.md, A2A).

export interface AgentEndpoint {
  name: string;
  cardUrl: string;
  /** Sent with every request, the card's too (its A2A key, say). */
  headers: Record<string, string>;
}

const TERMINAL_FAILURES = new Set([
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** The protocol's state name without its prefix: TASK_STATE_WORKING → working. */
export function stateName(state: TaskState): string {
  return taskStateToJSON(state)
    .replace(/^TASK_STATE_/, '')
    .toLowerCase();
}

export function textOf(parts: Part[] | undefined): string {
  return (parts ?? [])
    .map((part) => {
      const content = part.content;
      if (content?.$case === 'text') return content.value;
      if (content?.$case === 'data') return JSON.stringify(content.value);
      return '';
    })
    .filter((text) => text !== '')
    .join('\n');
}

/** Why a request to the agent failed, in words for an administrator or a model. */
export function describeAgentError(error: unknown, headers: Record<string, string> = {}): string {
  // An agent's refusal may quote the header it was sent: its values are never shown.
  return redactSecrets(causedBy(error), Object.values(headers));
}

function causedBy(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : String(error);
  // fetch hides the reason (ECONNREFUSED, a refused port…) in its causes.
  let cause = (error as { cause?: unknown } | null)?.cause;
  for (let depth = 0; cause && depth < 4; depth += 1) {
    const { code, message: detail } = cause as { code?: unknown; message?: unknown };
    const reason = typeof code === 'string' ? code : typeof detail === 'string' ? detail : null;
    if (reason) return text.includes(reason) ? text : `${text} (${reason})`;
    cause = (cause as { cause?: unknown }).cause;
  }
  return text;
}

/** fetch's own failures (no connection, no answer in time), from any realm. */
function isNetworkFailure(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'TypeError' || name === 'TimeoutError';
}

/**
 * A card's endpoint on another origin than the card itself. The agent's headers (its key,
 * say) are sent with every call: a card that named another host or port would have them
 * sent there, so such an agent is refused, and calls never leave the registered origin
 * (docs/tools.md, "Delegating to other agents").
 */
export class ForeignEndpointError extends Error {
  constructor(endpoint: string, origin: string) {
    super(
      `the agent card names its endpoint ${endpoint}, on another origin than the card's ` +
        `(${origin}); refused, so the agent's headers are sent to ${origin} only`,
    );
    this.name = 'ForeignEndpointError';
  }
}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/** Every endpoint a card names: its interfaces (1.0) and a 0.3 card's `url`. */
function endpointsOf(card: AgentCard): string[] {
  const urls = (card.supportedInterfaces ?? []).map((entry) => entry.url);
  const legacy = (card as unknown as { url?: unknown }).url;
  if (typeof legacy === 'string') urls.push(legacy);
  return urls;
}

export function assertSameOrigin(card: AgentCard, cardUrl: string): void {
  const origin = new URL(cardUrl).origin;
  for (const url of endpointsOf(card)) {
    if (originOf(url) !== origin) throw new ForeignEndpointError(url, origin);
  }
}

export class RemoteAgent implements Delegate {
  private constructor(
    private readonly endpoint: AgentEndpoint,
    readonly card: AgentCard,
    private readonly client: Awaited<ReturnType<ClientFactory['createFromUrl']>>,
    private readonly timeoutMs: number,
  ) {}

  /** Reads the card (at most `cardTimeoutMs`); throws when the agent cannot be reached. */
  static async open(
    endpoint: AgentEndpoint,
    cardTimeoutMs: number,
    timeoutMs: number,
  ): Promise<RemoteAgent> {
    const origin = new URL(endpoint.cardUrl).origin;
    const withHeaders: typeof fetch = (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      // Pinned whatever the card or the SDK ask for: the headers go to the registered
      // origin only, and a redirect elsewhere is not followed.
      if (originOf(url) !== origin) {
        return Promise.reject(new ForeignEndpointError(url, origin));
      }
      const headers = new Headers(init?.headers);
      for (const [name, value] of Object.entries(endpoint.headers)) headers.set(name, value);
      return fetch(input, { ...init, headers, redirect: 'error' });
    };
    const cardFetch: typeof fetch = (input, init) =>
      withHeaders(input, { ...init, signal: AbortSignal.timeout(cardTimeoutMs) });
    const resolver = new DefaultAgentCardResolver({ fetchImpl: cardFetch });
    const card = await resolver.resolve(endpoint.cardUrl, '');
    assertSameOrigin(card, endpoint.cardUrl);
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl: withHeaders })],
      cardResolver: resolver,
    });
    const client = await factory.createFromAgentCard(card);
    return new RemoteAgent(endpoint, card, client, timeoutMs);
  }

  get agent(): string {
    return this.endpoint.name;
  }

  get description(): string {
    const skills = this.card.skills.map((skill) => skill.name).join(', ');
    return [this.card.description, skills ? `Its skills: ${skills}.` : '']
      .filter((text) => text !== '')
      .join(' ');
  }

  async delegate(
    message: string,
    signal: AbortSignal,
    progress: (update: DelegateProgress) => Promise<void>,
  ): Promise<string> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const request = SendMessageRequest.fromJSON({
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: message }] },
    });
    let state = TaskState.TASK_STATE_SUBMITTED;
    let statusText = '';
    const artifacts: string[] = [];
    try {
      const events = this.client.sendMessageStream(request, {
        signal: AbortSignal.any([signal, deadline]),
      });
      for await (const event of events) {
        const payload = event.payload;
        if (payload?.$case === 'message') return textOf(payload.value.parts);
        if (payload?.$case === 'artifactUpdate') {
          const text = textOf(payload.value.artifact?.parts);
          if (text !== '') artifacts.push(text);
          continue;
        }
        const status = payload?.$case === 'task' ? payload.value.status : payload?.value.status;
        if (!status) continue;
        state = status.state;
        statusText = textOf(status.message?.parts);
        if (payload?.$case === 'task') {
          // A whole task carries every artifact so far.
          artifacts.splice(
            0,
            artifacts.length,
            ...payload.value.artifacts.map((a) => textOf(a.parts)),
          );
        }
        await progress({ state: stateName(state), ...(statusText ? { message: statusText } : {}) });
      }
    } catch (error) {
      if (deadline.aborted) {
        throw new DelegationError(
          'tool_timeout',
          `agent "${this.agent}" did not finish within ${this.timeoutMs} ms`,
        );
      }
      if (signal.aborted) throw new DelegationError('tool_failed', 'the reply was stopped');
      throw new DelegationError(
        isNetworkFailure(error) ? 'server_unreachable' : 'tool_failed',
        `agent "${this.agent}": ${describeAgentError(error, this.endpoint.headers)}`,
      );
    }
    if (state === TaskState.TASK_STATE_COMPLETED) {
      return artifacts.filter((text) => text !== '').join('\n') || statusText;
    }
    if (TERMINAL_FAILURES.has(state)) {
      throw new DelegationError(
        'tool_failed',
        redactSecrets(
          `agent "${this.agent}" ended the task ${stateName(state)}${statusText ? `: ${statusText}` : ''}`,
          Object.values(this.endpoint.headers),
        ),
      );
    }
    throw new DelegationError(
      'tool_failed',
      `agent "${this.agent}" left the task ${stateName(state)}; only tasks that run to an end can be delegated`,
    );
  }
}
