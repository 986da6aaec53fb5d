import { Injectable, Logger } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { IMAGE_LIMITS, type ApiErrorCode } from '@switchyard/contracts';
import { MessageStatus } from '@switchyard/db';
import { Counter, Registry } from '@switchyard/observability';
import type OpenAI from 'openai';
import { RecordRotation } from '../api-keys/record-rotation.js';
import { AttachmentsService, type AttachmentInfo } from '../attachments/attachments.service.js';
import { type Principal } from '../auth/principal.js';
import { CreditsService, type CreditHold } from '../credits/credits.service.js';
import { InvitationsService } from '../credits/invitations.service.js';
import { OUTPUT_CAP_TOKENS } from '../credits/pricing.js';
import { ModelsService, type UsableModel } from '../models/models.service.js';
import { MAX_TOOL_STEPS, ToolLoopService, type ModelTurn } from '../tools/tool-loop.service.js';
import { type ToolStep } from '../tools/tool-step.js';
import { IdleWatchdog } from '../upstream/idle-watchdog.js';
import {
  UpstreamClient,
  type ChatTurn,
  type ModelMessage,
  type ModelTool,
} from '../upstream/upstream-client.js';
import {
  classifyUpstreamError,
  describeFailure,
  isRetryable,
  type UpstreamFailure,
} from '../upstream/upstream-failure.js';
import { type UpstreamTarget } from '../upstream/upstream-target.js';
import { conversationNotFound } from './conversations.service.js';
import { type SendMessageDto } from './conversations.dto.js';
import { ConversationsRepository } from './conversations.repository.js';
import { type EventSink } from './event-stream.js';

// Sending a message: everything that can be refused is checked first and answered as a
// plain JSON error; then the user message is saved, the stream opens, and the records of
// the model's purpose are tried in round-robin order. A record that times out, cannot be
// reached or has no channel is skipped, as long as nothing has reached the browser yet.

/** What one reply needs: the model, its records, the turns so far, the MCP servers. */
export interface ReplyRequest {
  model: UsableModel;
  targets: UpstreamTarget[];
  /** The conversation so far, ending with the new user message. */
  turns: ChatTurn[];
  /** The MCP servers to offer (used when the model has a tool mode). */
  mcpServerIds: number[];
}

/** A message that passed every check; what `deliver` needs to get the reply. */
export interface PreparedMessage extends ReplyRequest {
  userId: number;
  conversationId: string;
  /** The credits frozen for the reply; null for a free model (docs/credits.md). */
  hold: CreditHold | null;
}

/** A reply that is not saved as a message: an A2A task's (docs/tools.md). */
export interface Answer {
  content: string;
  toolSteps: ToolStep[];
  usage: { promptTokens: number; completionTokens: number } | null;
  error: { code: ApiErrorCode; message: string } | null;
}

interface Outcome {
  content: string;
  imageUrls: string[];
  usage: { promptTokens: number; completionTokens: number } | null;
  failure: { failure: UpstreamFailure; target: UpstreamTarget } | null;
  toolSteps: ToolStep[];
  /** The tool loop stopped at its limit (docs/tools.md). */
  toolLimitReached: boolean;
}

function emptyOutcome(): Outcome {
  return {
    content: '',
    imageUrls: [],
    usage: null,
    failure: null,
    toolSteps: [],
    toolLimitReached: false,
  };
}

type AttemptEnd = 'timeout' | 'cancelled';

/** The event a reply's stream ends with, sent once its credits are settled. */
interface LastEvent {
  event: 'done' | 'error';
  data: object;
}

/** A stored or new message, as far as the model's turns need it. */
interface TurnSource {
  role: string;
  content: string;
  attachments: AttachmentInfo[];
}

@Injectable()
export class MessagesService {
  private readonly logger = new Logger(MessagesService.name);
  private readonly attempts: Counter<'purpose' | 'outcome'>;

  constructor(
    private readonly conversations: ConversationsRepository,
    private readonly models: ModelsService,
    private readonly rotation: RecordRotation,
    private readonly upstream: UpstreamClient,
    private readonly toolLoop: ToolLoopService,
    private readonly env: ChatEnv,
    private readonly attachments: AttachmentsService,
    private readonly credits: CreditsService,
    private readonly invitations: InvitationsService,
    registry: Registry,
  ) {
    this.attempts = new Counter({
      name: 'chat_upstream_attempts_total',
      help: 'Calls to upstream API key records, by purpose and outcome.',
      labelNames: ['purpose', 'outcome'],
      registers: [registry],
    });
  }

  /**
   * Checks the message, freezes its worst-case cost and saves it; throws the JSON errors
   * (404, 403, 402, 503). The freeze comes last of the checks, so a refused message costs
   * nothing and is not saved.
   */
  async prepare(
    principal: Principal,
    conversationId: string,
    dto: SendMessageDto,
  ): Promise<PreparedMessage> {
    const conversation = await this.conversations.findOwned(conversationId, principal.id);
    if (!conversation) throw conversationNotFound(conversationId);
    const model = await this.models.resolveForUse(principal, dto.model ?? conversation.model);
    const images = await this.attachments.forMessage(principal, dto.attachmentIds ?? [], model);
    const targets = await this.rotation.next(model.purpose);
    const history =
      model.purpose === 'drawing'
        ? []
        : await this.conversations.recentHistory(conversationId, this.env.CHAT_HISTORY_MESSAGES);
    const sources = [...history, { role: 'user', content: dto.content, attachments: images }];
    const hold = await this.credits.freeze(principal.id, conversationId, model.name, model.price, {
      texts: sources.map((source) => source.content),
      images: model.vision ? sources.reduce((n, source) => n + source.attachments.length, 0) : 0,
    });
    try {
      await this.conversations.addUserMessage(
        conversationId,
        dto.content,
        model.name,
        images.map((image) => image.id),
      );
      const turns = await this.turnsOf(sources, model.vision);
      return {
        userId: principal.id,
        conversationId,
        model,
        targets,
        turns,
        mcpServerIds: conversation.mcpServerIds,
        hold,
      };
    } catch (error) {
      if (hold) await this.credits.settle(hold, null, false);
      throw error;
    }
  }

  /**
   * The conversation as the model reads it. A model that reads images gets each question's
   * images as data URLs, the newest first while their total stays within one message's
   * image limit (so a request stays within the gateway's body limit); older images, and
   * every image for a model that reads none, are left out, their question's text kept.
   */
  private async turnsOf(messages: TurnSource[], vision: boolean): Promise<ChatTurn[]> {
    let budget = IMAGE_LIMITS.bytesPerMessage;
    const turns: ChatTurn[] = [];
    for (const message of [...messages].reverse()) {
      if (message.role === 'assistant') {
        turns.push({ role: 'assistant', content: message.content });
        continue;
      }
      if (message.role !== 'user') continue;
      const parts: OpenAI.Chat.Completions.ChatCompletionContentPartImage[] = [];
      for (const image of vision ? message.attachments : []) {
        if (image.byteSize > budget) continue;
        const url = await this.attachments.dataUrl(image);
        if (url === null) continue;
        budget -= image.byteSize;
        parts.push({ type: 'image_url', image_url: { url } });
      }
      turns.push({
        role: 'user',
        content:
          parts.length === 0
            ? message.content
            : [{ type: 'text', text: message.content }, ...parts],
      });
    }
    return turns.reverse();
  }

  /**
   * Streams the reply into `sink`, saves it and settles its credits; never throws, always
   * ends the stream. The last event (`done` or `error`) goes out once the credits are
   * settled, so a client that reads its balance on it sees the reply charged.
   */
  async deliver(prepared: PreparedMessage, sink: EventSink): Promise<void> {
    let outcome: Outcome | null = null;
    let last: LastEvent | null;
    try {
      outcome = await this.produce(prepared, sink);
      last = await this.finish(prepared, outcome);
    } catch (error) {
      this.logger.error({
        message: 'reply failed',
        err: error,
        conversationId: prepared.conversationId,
      });
      last = {
        event: 'error',
        data: {
          code: 'internal_error' satisfies ApiErrorCode,
          message: 'An unexpected error occurred; it has been logged',
        },
      };
    }
    await this.settle(prepared, outcome);
    try {
      if (last) await sink.send(last.event, last.data);
    } finally {
      sink.end();
    }
  }

  /**
   * Charges what the reply used and returns the rest of its freeze; a failed reply costs
   * nothing. A successful reply settles the user's invitation, if it is open.
   */
  private async settle(prepared: PreparedMessage, outcome: Outcome | null): Promise<void> {
    const succeeded = outcome !== null && this.errorOf(outcome) === null;
    if (succeeded) {
      await this.invitations.afterSuccessfulReply(prepared.userId).catch((error: unknown) => {
        this.logger.error({
          message: 'invitation not settled',
          err: error,
          userId: prepared.userId,
        });
      });
    }
    if (!prepared.hold) return;
    try {
      await this.credits.settle(prepared.hold, outcome?.usage ?? null, succeeded);
    } catch (error) {
      this.logger.error({
        message: 'credits not settled',
        err: error,
        requestId: prepared.hold.requestId,
        userId: prepared.userId,
      });
    }
  }

  /**
   * A reply streamed into `sink` (its text and tool steps; no `done` or `error` event)
   * and returned, without saving it anywhere: the same model calls and tool loop as a
   * conversation's reply. Throws only on a defect.
   */
  async answer(request: ReplyRequest, sink: EventSink): Promise<Answer> {
    const outcome = await this.produce(request, sink);
    return {
      content: outcome.content,
      toolSteps: outcome.toolSteps,
      usage: outcome.usage,
      error: this.errorOf(outcome),
    };
  }

  private async produce(request: ReplyRequest, sink: EventSink): Promise<Outcome> {
    if (request.model.purpose === 'drawing') return this.draw(request, sink);
    const mode = request.model.toolMode;
    const offersTools =
      mode !== 'off' && (request.mcpServerIds.length > 0 || (await this.toolLoop.hasDelegates()));
    return offersTools ? this.converseWithTools(request, mode, sink) : this.converse(request, sink);
  }

  private async converse(prepared: ReplyRequest, sink: EventSink): Promise<Outcome> {
    const outcome = emptyOutcome();
    await this.callModel(prepared, prepared.turns, undefined, sink, outcome);
    return outcome;
  }

  private async converseWithTools(
    prepared: ReplyRequest,
    mode: 'native' | 'prompt',
    sink: EventSink,
  ): Promise<Outcome> {
    const outcome = emptyOutcome();
    const result = await this.toolLoop.run(
      mode,
      prepared.mcpServerIds,
      prepared.turns,
      sink,
      (messages, tools) => this.callModel(prepared, messages, tools, sink, outcome),
    );
    outcome.toolSteps = result.steps;
    outcome.toolLimitReached = result.limitReached;
    return outcome;
  }

  /**
   * One model call, over the records in turn: streams its text to the browser and adds
   * its text, usage and failure to `outcome`.
   */
  private async callModel(
    prepared: ReplyRequest,
    messages: ModelMessage[],
    tools: ModelTool[] | undefined,
    sink: EventSink,
    outcome: Outcome,
  ): Promise<ModelTurn> {
    const turn: ModelTurn = { content: '', toolCalls: [], failed: false };
    let usage: Outcome['usage'] = null;
    for (const target of prepared.targets) {
      const calls: ModelTurn['toolCalls'] = [];
      const call = async (signal: AbortSignal, touch: () => void) => {
        const pieces = await this.upstream.streamChat(
          target,
          prepared.model.name,
          messages,
          signal,
          tools,
          prepared.model.price.per1kOutput > 0 ? OUTPUT_CAP_TOKENS : undefined,
        );
        for await (const piece of pieces) {
          touch();
          if (piece.usage) usage = piece.usage;
          for (const delta of piece.toolCalls) {
            const entry = (calls[delta.index] ??= { id: '', name: '', arguments: '' });
            if (delta.id) entry.id = delta.id;
            if (delta.name) entry.name = delta.name;
            if (delta.arguments) entry.arguments += delta.arguments;
          }
          if (piece.content !== '') {
            turn.content += piece.content;
            outcome.content += piece.content;
            await sink.send('delta', { content: piece.content });
          }
        }
      };
      const failure = await this.attempt(prepared, target, sink, call);
      outcome.failure = failure ? { failure, target } : null;
      turn.failed = failure !== null;
      turn.toolCalls = calls.filter((entry) => entry !== undefined);
      // Once text has reached the browser, another record would start the answer again.
      if (!failure || turn.content !== '' || !isRetryable(failure)) break;
    }
    const spent = usage as Outcome['usage'];
    if (spent) {
      outcome.usage = {
        promptTokens: (outcome.usage?.promptTokens ?? 0) + spent.promptTokens,
        completionTokens: (outcome.usage?.completionTokens ?? 0) + spent.completionTokens,
      };
    }
    return turn;
  }

  private async draw(prepared: ReplyRequest, sink: EventSink): Promise<Outcome> {
    const outcome = emptyOutcome();
    const last = prepared.turns.at(-1)?.content ?? '';
    // A drawing model is never sent images, so its prompt is always the question's text.
    const prompt = typeof last === 'string' ? last : '';
    for (const target of prepared.targets) {
      // The answer is one JSON body: the watchdog bounds the wait for all of it.
      const call = async (signal: AbortSignal) => {
        const images = await this.upstream.generateImages(
          target,
          prepared.model.name,
          prompt,
          signal,
        );
        if (images.urls.length === 0) throw new SyntaxError('the upstream returned no image');
        if (signal.aborted) return;
        outcome.imageUrls = images.urls;
        outcome.usage = images.usage;
        await sink.send('image', { urls: images.urls });
      };
      const failure = await this.attempt(prepared, target, sink, call);
      outcome.failure = failure ? { failure, target } : null;
      if (!failure || outcome.imageUrls.length > 0 || !isRetryable(failure)) break;
    }
    return outcome;
  }

  /**
   * One call to one record: resolves with the failure, or null when it succeeded. The
   * watchdog is armed before the call, with the client's timeout, so it is always the
   * one that decides a timeout; it also covers the silence between streamed pieces,
   * which the client's timeout does not.
   */
  private async attempt(
    prepared: ReplyRequest,
    target: UpstreamTarget,
    sink: EventSink,
    call: (signal: AbortSignal, touch: () => void) => Promise<void>,
  ): Promise<UpstreamFailure | null> {
    const purpose = prepared.model.purpose;
    if (sink.gone.aborted) return { kind: 'cancelled', detail: 'the browser went away' };
    const controller = new AbortController();
    const watchdog = new IdleWatchdog(this.upstream.timeoutMs, () =>
      controller.abort('timeout' satisfies AttemptEnd),
    );
    const cancel = () => controller.abort('cancelled' satisfies AttemptEnd);
    sink.gone.addEventListener('abort', cancel);
    let failure: UpstreamFailure | null = null;
    try {
      watchdog.touch();
      await call(controller.signal, () => watchdog.touch());
    } catch (error) {
      failure = classifyUpstreamError(error);
    } finally {
      watchdog.stop();
      sink.gone.removeEventListener('abort', cancel);
    }
    // An aborted stream may simply end: what stopped it is in the signal, not in an error.
    if (controller.signal.aborted) {
      failure =
        controller.signal.reason === ('timeout' satisfies AttemptEnd)
          ? { kind: 'timeout', detail: 'no data in time' }
          : { kind: 'cancelled', detail: 'the browser went away' };
    }
    this.attempts.inc({ purpose, outcome: failure?.kind ?? 'ok' });
    if (failure && failure.kind !== 'cancelled') {
      this.logger.warn({
        message: 'upstream call failed',
        recordId: target.recordId,
        address: target.address,
        model: prepared.model.name,
        kind: failure.kind,
        status: failure.status,
        detail: failure.detail,
      });
    }
    return failure;
  }

  /** Saves the reply; returns the event that ends its stream (none for a cancelled one). */
  private async finish(prepared: PreparedMessage, outcome: Outcome): Promise<LastEvent | null> {
    const served = outcome.content !== '' || outcome.imageUrls.length > 0;
    const error = this.errorOf(outcome);
    const status = !error
      ? MessageStatus.complete
      : served
        ? MessageStatus.partial
        : MessageStatus.failed;
    const usage = outcome.usage ?? { promptTokens: 0, completionTokens: 0 };
    const saved = await this.conversations.saveAssistantReply({
      conversationId: prepared.conversationId,
      userId: prepared.userId,
      model: prepared.model.name,
      content: outcome.content,
      imageUrls: outcome.imageUrls,
      toolSteps: outcome.toolSteps,
      status,
      errorCode: error?.code ?? null,
      ...usage,
    });
    const messageId = saved ? Number(saved.id) : null;
    if (!error) return { event: 'done', data: { messageId, usage } };
    if (error.code === 'request_cancelled') return null;
    return {
      event: 'error',
      data: {
        code: error.code,
        message: error.message,
        ...(outcome.failure ? { address: outcome.failure.target.address } : {}),
        messageId,
      },
    };
  }

  private errorOf(outcome: Outcome): Answer['error'] {
    if (outcome.failure) {
      return describeFailure(
        outcome.failure.failure,
        outcome.failure.target.address,
        this.upstream.timeoutMs,
      );
    }
    if (outcome.toolLimitReached) {
      return {
        code: 'tool_step_limit',
        message: `The model still called tools after ${MAX_TOOL_STEPS} rounds of tool calls; stopped there`,
      };
    }
    return null;
  }
}
