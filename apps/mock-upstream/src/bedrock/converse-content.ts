import { randomBytes } from 'node:crypto';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { approximateTokens, pieces } from '../openai/completion.js';
import { schemaArguments } from '../structured/schema-value.js';

// How the mock answers Converse and ConverseStream
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html): it
// echoes the last user text or tool result, or calls the declared tool (the named one, or
// the first), with input valid against its schema, when the turn does not answer a call. The system prompt counts as read from the
// prompt cache, so cache reads show in every test that sends one.

interface Block {
  text?: string;
  image?: { format?: string; source?: { bytes?: string } };
  toolUse?: { toolUseId?: string; name?: string; input?: unknown };
  toolResult?: { toolUseId?: string; content?: { text?: string; json?: unknown }[] };
}

interface Message {
  role?: string;
  content?: Block[];
}

interface ToolSpec {
  name: string;
  inputSchema?: { json?: unknown };
}

export interface ConverseRequest {
  messages: Message[];
  system?: { text?: string }[];
  inferenceConfig?: Record<string, unknown>;
  toolConfig?: { tools?: { toolSpec?: ToolSpec }[]; toolChoice?: { tool?: { name?: string } } };
}

const REQUEST_FIELDS = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
]);
const INFERENCE_FIELDS = new Set(['maxTokens', 'temperature', 'topP', 'stopSequences']);
const IMAGE_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);

/** What Bedrock would refuse with a 400 ValidationException, or null when the request is well formed. */
export function invalidConverse(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'Malformed input request, please reformat your input and try again.';
  const request = body as Record<string, unknown>;
  const extra = Object.keys(request).find((name) => !REQUEST_FIELDS.has(name));
  if (extra) return `Malformed input request: extraneous key [${extra}] is not permitted`;
  const inference = Object.keys((request.inferenceConfig as object | undefined) ?? {}).find(
    (name) => !INFERENCE_FIELDS.has(name),
  );
  if (inference) return `Malformed input request: extraneous key [${inference}] is not permitted`;
  const messages = request.messages as Message[] | undefined;
  if (!Array.isArray(messages) || messages.length === 0)
    return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  if (messages[0]?.role !== 'user')
    return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  let usesTools = false;
  for (const [index, message] of messages.entries()) {
    if (index > 0 && messages[index - 1]!.role === message.role)
      return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    for (const block of message.content ?? []) {
      if (typeof block.text === 'string' && block.text.trim() === '')
        return 'The text field in the ContentBlock object is blank. Add text to the text field, and try again.';
      if (
        block.image &&
        (!IMAGE_FORMATS.has(block.image.format ?? '') || !block.image.source?.bytes)
      )
        return 'The model returned the following errors: Could not process image';
      if (block.toolUse || block.toolResult) usesTools = true;
    }
  }
  if (usesTools && !request.toolConfig)
    return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
  return null;
}

function textOf(blocks: { text?: string; json?: unknown }[] | undefined): string {
  return (blocks ?? [])
    .map((block) => block.text ?? (block.json !== undefined ? JSON.stringify(block.json) : ''))
    .join('');
}

export type ConverseAnswer =
  | { kind: 'text'; text: string }
  | { kind: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export function answerConverse(request: ConverseRequest, reply?: string): ConverseAnswer {
  const last = request.messages.at(-1)!;
  const result = last.content?.find((block) => block.toolResult)?.toolResult;
  if (result) return { kind: 'text', text: reply ?? `Echo: ${textOf(result.content)}` };
  const tools = (request.toolConfig?.tools ?? []).flatMap((t) => (t.toolSpec ? [t.toolSpec] : []));
  if (tools.length > 0) {
    const named = request.toolConfig?.toolChoice?.tool?.name;
    const tool = tools.find((t) => t.name === named) ?? tools[0]!;
    const input = schemaArguments(tool.inputSchema?.json);
    return {
      kind: 'tool_use',
      id: `tooluse_${randomBytes(11).toString('base64url')}`,
      name: tool.name,
      input,
    };
  }
  const images = (last.content ?? []).filter((block) => block.image).length;
  const text = textOf(last.content);
  return {
    kind: 'text',
    text: reply ?? `Echo: ${text}${images > 0 ? ` (${images} image${images > 1 ? 's' : ''})` : ''}`,
  };
}

export interface ConverseUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cacheReadInputTokens: number;
  cacheWriteInputTokens: number;
}

export function usageOf(request: ConverseRequest, answer: ConverseAnswer): ConverseUsage {
  const cached = approximateTokens((request.system ?? []).map((s) => s.text ?? '').join('\n'));
  const input = approximateTokens(
    request.messages.map((m) => textOf(m.content as { text?: string }[])).join('\n'),
  );
  const output =
    answer.kind === 'text'
      ? approximateTokens(answer.text)
      : approximateTokens(answer.name + JSON.stringify(answer.input));
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: input + output + cached,
    cacheReadInputTokens: cached,
    cacheWriteInputTokens: 0,
  };
}

export function converseBody(answer: ConverseAnswer, usage: ConverseUsage): unknown {
  return {
    output: {
      message: {
        role: 'assistant',
        content:
          answer.kind === 'text'
            ? [{ text: answer.text }]
            : [{ toolUse: { toolUseId: answer.id, name: answer.name, input: answer.input } }],
      },
    },
    stopReason: answer.kind === 'text' ? 'end_turn' : 'tool_use',
    usage,
    metrics: { latencyMs: 1 },
  };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event frame, as ConverseStream frames them. */
export function eventFrame(type: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** An exception frame, as ConverseStream sends errors after its 200. */
export function exceptionFrame(type: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

/** The documented event order: messageStart, content blocks, messageStop, metadata. */
export function converseStream(answer: ConverseAnswer, usage: ConverseUsage): Uint8Array[] {
  const frames = [eventFrame('messageStart', { role: 'assistant' })];
  if (answer.kind === 'text') {
    for (const piece of pieces(answer.text))
      frames.push(
        eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: piece } }),
      );
  } else {
    frames.push(
      eventFrame('contentBlockStart', {
        contentBlockIndex: 0,
        start: { toolUse: { toolUseId: answer.id, name: answer.name } },
      }),
    );
    const json = JSON.stringify(answer.input);
    const half = Math.ceil(json.length / 2);
    for (const part of [json.slice(0, half), json.slice(half)])
      frames.push(
        eventFrame('contentBlockDelta', {
          contentBlockIndex: 0,
          delta: { toolUse: { input: part } },
        }),
      );
  }
  frames.push(eventFrame('contentBlockStop', { contentBlockIndex: 0 }));
  frames.push(
    eventFrame('messageStop', { stopReason: answer.kind === 'text' ? 'end_turn' : 'tool_use' }),
  );
  frames.push(eventFrame('metadata', { usage, metrics: { latencyMs: 1 } }));
  return frames;
}
