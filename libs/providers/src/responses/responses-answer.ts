import { randomBytes } from 'node:crypto';
import type { ReportedUsage } from '@switchyard/contracts';
import type { AnswerContext, StreamTranslator, TranslatedAnswer } from '../adapter.js';
import { ChatChunkDecoder, EventStreamDecoder, type ChatStreamChunk } from '../sse.js';
import { type OpenAIUsage } from '../openai-usage.js';

// OpenAI's Responses API in front of the gateway (docs/providers.md, "OpenAI's Responses API
// in front"): OpenAI's chat completion and its chunks → a Response object and the Responses
// event stream (https://platform.openai.com/docs/api-reference/responses-streaming), each
// event with its `sequence_number`, in the order OpenAI sends them. An `openai` channel's
// answer is relayed as it came; only its usage is read.

/** What a Response object echoes of the request that made it. */
export interface ResponseEcho {
  instructions: unknown;
  max_output_tokens: unknown;
  parallel_tool_calls: unknown;
  temperature: unknown;
  top_p: unknown;
  tool_choice: unknown;
  tools: unknown;
  text: unknown;
  metadata: unknown;
  user: unknown;
}

/** The request's fields a Response repeats, with OpenAI's defaults. */
export function responseEcho(body: Record<string, unknown>): ResponseEcho {
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    text: body.text ?? { format: { type: 'text' } },
    metadata: body.metadata ?? {},
    user: body.user ?? null,
  };
}

interface Usage {
  reported: ReportedUsage;
  reasoning: number;
}

function usageOf(usage: OpenAIUsage | null | undefined): Usage | null {
  if (typeof usage?.prompt_tokens !== 'number') return null;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    reported: {
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens ?? 0,
      ...(cached > 0 ? { cachedTokens: cached } : {}),
    },
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** The Responses usage object: input includes the cached part, output the reasoning. */
function responsesUsage(usage: Usage | null): Record<string, unknown> | null {
  if (!usage) return null;
  const { promptTokens, completionTokens, cachedTokens } = usage.reported;
  return {
    input_tokens: promptTokens,
    input_tokens_details: { cached_tokens: cachedTokens ?? 0 },
    output_tokens: completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning },
    total_tokens: promptTokens + completionTokens,
  };
}

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** Chat's finish reason as a Response's status: cut answers are `incomplete`, with why. */
function ending(finishReason: string | null | undefined): {
  status: 'completed' | 'incomplete';
  incomplete_details: { reason: string } | null;
} {
  if (finishReason === 'length')
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter')
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

interface ResponseShell {
  id: string;
  createdAt: number;
  model: string;
  echo: ResponseEcho;
}

function responseObject(
  shell: ResponseShell,
  fields: {
    status: string;
    incomplete_details: { reason: string } | null;
    output: Record<string, unknown>[];
    usage: Record<string, unknown> | null;
  },
): Record<string, unknown> {
  const { echo } = shell;
  return {
    id: shell.id,
    object: 'response',
    created_at: shell.createdAt,
    status: fields.status,
    background: false,
    error: null,
    incomplete_details: fields.incomplete_details,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    model: shell.model,
    output: fields.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    // Nothing is kept: a converted response cannot be retrieved or continued.
    store: false,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: 'disabled',
    usage: fields.usage,
    user: echo.user,
    metadata: echo.metadata,
  };
}

function messageItem(id: string, text: string, status: string): Record<string, unknown> {
  return {
    id,
    type: 'message',
    status,
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

function functionCallItem(
  id: string,
  call: { callId: string; name: string; args: string },
  status: string,
): Record<string, unknown> {
  return {
    id,
    type: 'function_call',
    status,
    call_id: call.callId,
    name: call.name,
    arguments: call.args,
  };
}

interface ChatCompletion {
  model?: string;
  choices?: {
    message?: {
      content?: string | null;
      refusal?: string | null;
      tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string | null;
  }[];
  usage?: OpenAIUsage;
}

/** OpenAI's chat completion as a Response object; its usage read for metering. */
export function chatAnswerToResponse(
  body: Buffer,
  context: AnswerContext,
  echo: ResponseEcho,
): TranslatedAnswer {
  const completion = JSON.parse(body.toString('utf8')) as ChatCompletion;
  const choice = completion.choices?.[0];
  const model = completion.model ?? context.model;
  const output: Record<string, unknown>[] = [];
  const text = choice?.message?.content ?? choice?.message?.refusal ?? '';
  if (text !== '') output.push(messageItem(newId('msg'), text, 'completed'));
  const calls = choice?.message?.tool_calls ?? [];
  for (const call of calls) {
    output.push(
      functionCallItem(
        newId('fc'),
        {
          callId: call.id ?? newId('call'),
          name: call.function?.name ?? '',
          args: call.function?.arguments ?? '',
        },
        'completed',
      ),
    );
  }
  const usage = usageOf(completion.usage);
  const response = responseObject(
    { id: newId('resp'), createdAt: context.created, model, echo },
    { ...ending(choice?.finish_reason), output, usage: responsesUsage(usage) },
  );
  const completionText =
    text +
    calls.map((call) => (call.function?.name ?? '') + (call.function?.arguments ?? '')).join('');
  return {
    body: Buffer.from(JSON.stringify(response)),
    usage: usage?.reported ?? null,
    model,
    completionText,
  };
}

function event(type: string, sequence: number, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...data })}\n\n`;
}

/** The event that ends a broken Responses stream; the openai SDKs raise it as an error. */
export function responsesErrorEvent(message: string, code: string, sequence: number): string {
  return event('error', sequence, { code, message, param: null });
}

interface OpenText {
  kind: 'text';
  id: string;
  outputIndex: number;
  text: string;
}

interface OpenCall {
  kind: 'call';
  id: string;
  outputIndex: number;
  callId: string;
  name: string;
  args: string;
}

/**
 * OpenAI's chunks in, the Responses events out: response.created and response.in_progress,
 * then each output item in turn (a message: output_item.added, content_part.added,
 * output_text.delta…, output_text.done, content_part.done, output_item.done; a function
 * call: output_item.added, function_call_arguments.delta…, function_call_arguments.done,
 * output_item.done), and response.completed (response.incomplete for a cut answer) with
 * the whole response and its usage. The end waits for the usage chunk (the upstream is
 * asked for it), or the end of the stream.
 */
export class ChatToResponsesStream implements StreamTranslator {
  private readonly chunks = new ChatChunkDecoder<ChatStreamChunk>({
    finished: () => Boolean(this.failure || this.stopped),
    chunk: (chunk) => this.translate(chunk),
    done: () => this.stop(),
  });
  private sequence = 0;
  private started = false;
  private stopped = false;
  private readonly shell: ResponseShell;
  private readonly output: Record<string, unknown>[] = [];
  private open: OpenText | OpenCall | null = null;
  /** Chat tool call index → its item, once opened. */
  private readonly calls = new Map<number, OpenCall>();
  private finish: string | null = null;
  private reportedUsage: Usage | null = null;
  failure: string | null = null;

  constructor(context: AnswerContext, echo: ResponseEcho) {
    this.shell = { id: newId('resp'), createdAt: context.created, model: context.model, echo };
  }

  get usage(): ReportedUsage | null {
    return this.reportedUsage?.reported ?? null;
  }

  push(chunk: Buffer): string {
    return this.chunks.push(chunk);
  }

  end(): string {
    if (this.failure || this.stopped) return '';
    if (this.finish === null) {
      this.failure = 'the upstream stream ended before its finish reason';
      return this.interrupt(this.failure);
    }
    return this.stop();
  }

  interrupt(reason: string): string {
    return responsesErrorEvent(
      `The upstream stream was interrupted: ${reason}`,
      'stream_interrupted',
      this.sequence++,
    );
  }

  private emit(type: string, data: Record<string, unknown>): string {
    return event(type, this.sequence++, data);
  }

  private translate(chunk: ChatStreamChunk): string {
    if (chunk.error) {
      this.failure = chunk.error.message ?? 'the upstream reported an error';
      return responsesErrorEvent(this.failure, 'upstream_error', this.sequence++);
    }
    if (typeof chunk.model === 'string' && !this.started) this.shell.model = chunk.model;
    let out = this.start();
    const usage = usageOf(chunk.usage);
    if (usage) this.reportedUsage = usage;
    const choice = chunk.choices?.[0];
    const delta = choice?.delta ?? {};
    const text = delta.content ?? delta.refusal;
    if (typeof text === 'string' && text !== '') {
      if (this.open?.kind !== 'text') out += this.openText();
      const open = this.open as OpenText;
      open.text += text;
      out += this.emit('response.output_text.delta', {
        item_id: open.id,
        output_index: open.outputIndex,
        content_index: 0,
        delta: text,
        logprobs: [],
      });
    }
    for (const call of delta.tool_calls ?? []) {
      const index = call.index ?? 0;
      let open = this.calls.get(index);
      if (!open) {
        out += this.closeItem();
        open = {
          kind: 'call',
          id: newId('fc'),
          outputIndex: this.output.length,
          callId: call.id ?? newId('call'),
          name: call.function?.name ?? '',
          args: '',
        };
        this.calls.set(index, open);
        this.open = open;
        this.output.push(functionCallItem(open.id, open, 'in_progress'));
        out += this.emit('response.output_item.added', {
          output_index: open.outputIndex,
          item: functionCallItem(open.id, open, 'in_progress'),
        });
      }
      const args = call.function?.arguments;
      // A chat stream gives each call's arguments in turn; one that comes back to a call
      // already closed has nowhere to go in the Responses stream.
      if (args && open === this.open) {
        open.args += args;
        out += this.emit('response.function_call_arguments.delta', {
          item_id: open.id,
          output_index: open.outputIndex,
          delta: args,
        });
      }
    }
    if (choice?.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const response = responseObject(this.shell, {
      status: 'in_progress',
      incomplete_details: null,
      output: [],
      usage: null,
    });
    return (
      this.emit('response.created', { response }) + this.emit('response.in_progress', { response })
    );
  }

  private openText(): string {
    let out = this.closeItem();
    const open: OpenText = {
      kind: 'text',
      id: newId('msg'),
      outputIndex: this.output.length,
      text: '',
    };
    this.open = open;
    this.output.push(messageItem(open.id, '', 'in_progress'));
    out += this.emit('response.output_item.added', {
      output_index: open.outputIndex,
      item: { id: open.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    out += this.emit('response.content_part.added', {
      item_id: open.id,
      output_index: open.outputIndex,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    return out;
  }

  private closeItem(): string {
    const open = this.open;
    if (!open) return '';
    this.open = null;
    if (open.kind === 'text') {
      const item = messageItem(open.id, open.text, 'completed');
      this.output[open.outputIndex] = item;
      const place = { item_id: open.id, output_index: open.outputIndex, content_index: 0 };
      return (
        this.emit('response.output_text.done', { ...place, text: open.text, logprobs: [] }) +
        this.emit('response.content_part.done', {
          ...place,
          part: { type: 'output_text', text: open.text, annotations: [] },
        }) +
        this.emit('response.output_item.done', { output_index: open.outputIndex, item })
      );
    }
    const item = functionCallItem(open.id, open, 'completed');
    this.output[open.outputIndex] = item;
    return (
      this.emit('response.function_call_arguments.done', {
        item_id: open.id,
        output_index: open.outputIndex,
        name: open.name,
        arguments: open.args,
      }) + this.emit('response.output_item.done', { output_index: open.outputIndex, item })
    );
  }

  private stop(): string {
    if (this.stopped) return '';
    this.stopped = true;
    const out = this.start() + this.closeItem();
    const end = ending(this.finish);
    const response = responseObject(this.shell, {
      ...end,
      output: this.output,
      usage: responsesUsage(this.reportedUsage),
    });
    const type = end.status === 'completed' ? 'response.completed' : 'response.incomplete';
    return out + this.emit(type, { response });
  }
}

interface ResponsesUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
}

function reportedResponsesUsage(usage: ResponsesUsage | null | undefined): ReportedUsage | null {
  if (typeof usage?.input_tokens !== 'number') return null;
  const cached = usage.input_tokens_details?.cached_tokens ?? 0;
  return {
    promptTokens: usage.input_tokens,
    completionTokens: usage.output_tokens ?? 0,
    ...(cached > 0 ? { cachedTokens: cached } : {}),
  };
}

interface ResponseBody {
  id?: unknown;
  model?: string;
  usage?: ResponsesUsage | null;
  output?: { type?: string; content?: { text?: unknown }[]; arguments?: unknown }[];
}

function outputTextOf(response: ResponseBody): string {
  return (response.output ?? [])
    .map((item) =>
      item.type === 'message'
        ? (item.content ?? [])
            .map((part) => (typeof part.text === 'string' ? part.text : ''))
            .join('')
        : typeof item.arguments === 'string'
          ? item.arguments
          : '',
    )
    .join('');
}

/**
 * An `openai` channel's Response relayed as it came: its usage read for metering. A body
 * that is no Response (a proxy's page) throws, and the edge fails over.
 */
export function responsesPassthroughUsage(
  body: Buffer,
  context: AnswerContext,
): TranslatedAnswer & { id: string | null } {
  const response = JSON.parse(body.toString('utf8')) as ResponseBody;
  if (typeof response !== 'object' || response === null) throw new Error('not a Response');
  return {
    id: typeof response.id === 'string' ? response.id : null,
    body,
    usage: reportedResponsesUsage(response.usage),
    model: response.model ?? context.model,
    completionText: outputTextOf(response),
  };
}

const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Reads an `openai` channel's Responses stream relayed byte for byte: its usage from the
 * final event, and nothing written but the error event that ends a stream cut before it.
 */
export class ResponsesStreamReader implements StreamTranslator {
  private readonly decoder = new EventStreamDecoder();
  private lastSequence = -1;
  private ended = false;
  usage: ReportedUsage | null = null;
  failure: string | null = null;
  /** The Response's id, from the first event that carries it (`response.created`). */
  responseId: string | null = null;

  push(chunk: Buffer): string {
    for (const payload of this.decoder.feedJson<{
      type?: string;
      sequence_number?: number;
      message?: string;
      response?: ResponseBody;
    }>(chunk)) {
      if (typeof payload.sequence_number === 'number') this.lastSequence = payload.sequence_number;
      if (this.responseId === null && typeof payload.response?.id === 'string')
        this.responseId = payload.response.id;
      if (payload.type === 'error')
        this.failure = payload.message ?? 'the upstream reported an error';
      else if (FINAL_EVENTS.has(payload.type ?? '')) {
        this.ended = true;
        this.usage = reportedResponsesUsage(payload.response?.usage) ?? this.usage;
      }
    }
    return '';
  }

  end(): string {
    if (this.failure || this.ended) return '';
    this.failure = 'the upstream stream ended before its final event';
    return this.interrupt(this.failure);
  }

  interrupt(reason: string): string {
    return responsesErrorEvent(
      `The upstream stream was interrupted: ${reason}`,
      'stream_interrupted',
      ++this.lastSequence,
    );
  }
}
