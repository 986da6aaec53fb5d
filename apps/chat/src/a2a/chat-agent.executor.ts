import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { Role, TaskState, type Message, type Part } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { ApiError } from '@switchyard/contracts';
import { textOf } from '../a2a-agents/remote-agent.js';
import { RecordRotation } from '../api-keys/record-rotation.js';
import { type Principal } from '../auth/principal.js';
import { type EventSink, type ReplyEvent } from '../conversations/event-stream.js';
import { CreditsService, type CreditHold } from '../credits/credits.service.js';
import {
  MessagesService,
  type Answer,
  type ReplyRequest,
} from '../conversations/messages.service.js';
import { McpServersService } from '../mcp/mcp-servers.service.js';
import { ModelsService } from '../models/models.service.js';
import { ChatSettingsService } from '../settings/chat-settings.service.js';

// This app as an A2A agent (docs/tools.md, A2A): a task is one reply of the decision model
// (the chat settings' `a2aModel`) with every enabled MCP server and remote agent as tools:
// the same model calls and tool loop as a conversation's reply, through MessagesService.
// Tool steps become `working` status updates; the reply becomes the task's artifact. The
// key's user pays for it in credits like for a conversation's reply (docs/credits.md).

/** Where the JSON-RPC endpoint leaves the key's user for the executor. */
export const PRINCIPAL_STATE = 'switchyard.principal';

const REPLY_ARTIFACT = 'reply';

function textPart(text: string): Part {
  return {
    content: { $case: 'text', value: text },
    metadata: undefined,
    filename: '',
    mediaType: 'text/plain',
  };
}

function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

interface RunningTask {
  contextId: string;
  stop: AbortController;
}

/** What a tool step event says, in one line for the task's status. */
function describeStep(event: ReplyEvent, data: Record<string, unknown>): string | null {
  const what = [data.server, data.tool ?? data.uri].filter((v) => typeof v === 'string').join('/');
  if (event === 'tool_call') return `calling ${what}`;
  if (event === 'tool_progress') {
    return `delegated task ${String(data.state)}${typeof data.message === 'string' ? `: ${data.message}` : ''}`;
  }
  if (event === 'tool_result') {
    const error = data.error as { code: string } | undefined;
    return data.ok ? `${what} answered` : `${what} failed (${error?.code ?? 'tool_failed'})`;
  }
  return null;
}

@Injectable()
export class ChatAgentExecutor implements AgentExecutor {
  private readonly logger = new Logger(ChatAgentExecutor.name);
  private readonly running = new Map<string, RunningTask>();

  constructor(
    private readonly messages: MessagesService,
    private readonly models: ModelsService,
    private readonly rotation: RecordRotation,
    private readonly servers: McpServersService,
    private readonly settings: ChatSettingsService,
    private readonly credits: CreditsService,
  ) {}

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = context;
    const status = (state: TaskState, text?: string) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state,
            message: text === undefined ? undefined : agentMessage(taskId, contextId, text),
            timestamp: new Date().toISOString(),
          },
          metadata: undefined,
        }),
      );
    if (!context.task) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_SUBMITTED,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          artifacts: [],
          history: [context.userMessage],
          metadata: undefined,
        }),
      );
    }
    const stop = new AbortController();
    this.running.set(taskId, { contextId, stop });
    let hold: CreditHold | null = null;
    let answer: Answer | null = null;
    try {
      const principal = context.context.state.get(PRINCIPAL_STATE) as Principal;
      const text = textOf(context.userMessage.parts);
      const request = await this.prepare(principal, text);
      // Last of the checks, as for a conversation: a refused task costs nothing.
      hold = await this.credits.freeze(
        principal.id,
        null,
        request.model.name,
        request.model.price,
        { texts: [text], images: 0 },
        `A2A task ${taskId}`,
      );
      status(TaskState.TASK_STATE_WORKING);
      const sink: EventSink = {
        gone: stop.signal,
        send: (event, data) => {
          const line = describeStep(event, data as Record<string, unknown>);
          if (line !== null && !stop.signal.aborted) status(TaskState.TASK_STATE_WORKING, line);
          return Promise.resolve();
        },
        end: () => undefined,
      };
      answer = await this.messages.answer(request, sink);
      // A canceled task has its final state already (cancelTask).
      if (stop.signal.aborted) return;
      if (answer.error) {
        status(TaskState.TASK_STATE_FAILED, `${answer.error.code}: ${answer.error.message}`);
        return;
      }
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: REPLY_ARTIFACT,
            name: REPLY_ARTIFACT,
            description: `The answer of ${request.model.name}`,
            parts: [textPart(answer.content)],
            metadata: { toolSteps: answer.toolSteps, usage: answer.usage },
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      status(TaskState.TASK_STATE_COMPLETED);
    } catch (error) {
      if (!(error instanceof ApiError)) {
        this.logger.error({ message: 'A2A task failed', err: error, taskId });
      }
      status(
        TaskState.TASK_STATE_FAILED,
        error instanceof ApiError
          ? `${error.code}: ${error.message}`
          : 'internal_error: An unexpected error occurred; it has been logged',
      );
    } finally {
      this.running.delete(taskId);
      if (hold) await this.settle(hold, answer, stop.signal.aborted);
      bus.finished();
    }
  };

  /** Charges the task's usage and returns the rest; a failed or canceled task costs nothing. */
  private async settle(hold: CreditHold, answer: Answer | null, canceled: boolean): Promise<void> {
    const succeeded = answer !== null && answer.error === null && !canceled;
    try {
      await this.credits.settle(hold, answer?.usage ?? null, succeeded);
    } catch (error) {
      // The sweeper returns the freeze later (docs/credits.md, "Freeze and settle").
      this.logger.error({ message: 'credits not settled', err: error, requestId: hold.requestId });
    }
  }

  cancelTask = (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const task = this.running.get(taskId);
    if (task) {
      task.stop.abort();
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: task.contextId,
          status: {
            state: TaskState.TASK_STATE_CANCELED,
            message: agentMessage(taskId, task.contextId, 'Canceled by the client'),
            timestamp: new Date().toISOString(),
          },
          metadata: undefined,
        }),
      );
    }
    return Promise.resolve();
  };

  /** The decision model's reply to `text`, with every enabled MCP server; throws ApiError. */
  private async prepare(principal: Principal, text: string): Promise<ReplyRequest> {
    const name = await this.settings.a2aModel();
    if (!name) {
      throw new ApiError(
        'service_unavailable',
        'No model answers A2A tasks here: the chat settings name no A2A model',
      );
    }
    if (text.trim() === '') {
      throw new ApiError(
        'validation_failed',
        'The message has no text part; this agent reads text',
      );
    }
    const model = await this.models.resolveForUse(principal, name);
    if (model.purpose !== 'chat') {
      throw new ApiError('service_unavailable', `The A2A model "${name}" is not a chat model`);
    }
    const targets = await this.rotation.next(model.purpose);
    return {
      model,
      targets,
      turns: [{ role: 'user', content: text }],
      mcpServerIds: await this.servers.enabledIds(),
    };
  }
}
