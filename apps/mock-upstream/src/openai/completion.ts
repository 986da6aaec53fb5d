import { createHash, randomBytes } from 'node:crypto';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatMessage,
  FunctionDefinition,
  ToolCall,
  Usage,
} from '@switchyard/contracts';
import { schemaValue, schemaArguments } from '../structured/schema-value.js';

// How the mock answers a chat completion: it echoes the last user message (or says what
// it was told to), answers JSON valid against a `response_format` schema, and uses the
// tools it is offered (below).
// Token counts are a cheap approximation (four characters a token): the mock stands in
// for a provider, whose counts the gateway takes as given.

export function approximateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

export function promptText(messages: ChatMessage[]): string {
  return messages.map((m) => textOf(m.content)).join('\n');
}

/** Arguments for a function: a value valid against its parameters schema. */
function exampleArguments(fn: FunctionDefinition): string {
  return JSON.stringify(schemaArguments(fn.parameters));
}

export type Answer =
  | { kind: 'text'; content: string }
  | { kind: 'tool_call'; call: ToolCall }
  | { kind: 'function_call'; call: { name: string; arguments: string } };

// Deterministic tool use, for the chat app's tool loop (docs/tools.md):
// - offered tools natively, it calls the tool `tool_choice` forces or the last user
//   message names, with the JSON object written there; without one, or calling the first
//   tool when none is named, with arguments valid against the tool's schema
//   (../structured/schema-value.ts); given tool results, it answers quoting the last one;
// - told about tools in the system prompt (`<use_mcp_tool>` instructions listing
//   "Tool `name` on server `server`"), it answers with that command; given the result as
//   the next user turn (`[use_mcp_tool for …] Result:`), it answers quoting it;
// - a request that says "repeatedly" keeps calling, to exercise the loop's limit.

const RESULT_TURN = /^\[(?:use_mcp_tool|access_mcp_resource) for [^\]]*\] Result:\n?/;
const PROMPTED_TOOL = /Tool `([^`]+)` on server `([^`]+)`/g;
const PROMPTED_RESOURCE = /Resource `([^`]+)` on server `([^`]+)`/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function mentions(text: string, name: string): boolean {
  return new RegExp(`(?<![\\w-])${escapeRegExp(name)}(?![\\w-])`).test(text);
}

/** The JSON object written in the message, as text (possibly invalid: it is passed on). */
function argumentsIn(text: string): string | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  return start >= 0 && end > start ? text.slice(start, end + 1) : undefined;
}

function quoteResult(result: string): Answer {
  return { kind: 'text', content: `The tool answered: ${result}` };
}

function nativeToolAnswer(request: ChatCompletionRequest): Answer {
  const tools = request.tools ?? [];
  const choice = request.tool_choice as { function?: { name?: string } } | string | undefined;
  const lastUserIndex = request.messages.findLastIndex((m) => m.role === 'user');
  const said = textOf(request.messages[lastUserIndex]?.content ?? '');
  const results = request.messages.slice(lastUserIndex + 1).filter((m) => m.role === 'tool');
  if (results.length > 0 && !/\brepeatedly\b/i.test(said)) {
    return quoteResult(textOf(results.at(-1)!.content));
  }
  const chosen = typeof choice === 'object' ? choice?.function?.name : undefined;
  const named =
    tools.find((t) => t.function.name === chosen) ??
    tools.find(
      (t) =>
        mentions(said, t.function.name) ||
        mentions(said, t.function.name.split('__').at(-1) ?? t.function.name),
    );
  const tool = named ?? tools[0]!;
  return {
    kind: 'tool_call',
    call: {
      id: `call_${randomBytes(6).toString('hex')}`,
      type: 'function',
      function: {
        name: tool.function.name,
        arguments: (named && argumentsIn(said)) || exampleArguments(tool.function),
      },
    },
  };
}

/** Prompt mode: null when the system prompt describes no tools. */
function promptedToolAnswer(request: ChatCompletionRequest): Answer | null {
  const system = request.messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content))
    .join('\n');
  if (!system.includes('<use_mcp_tool>')) return null;
  const users = request.messages.filter((m) => m.role === 'user').map((m) => textOf(m.content));
  const last = users.at(-1) ?? '';
  const said = [...users].reverse().find((text) => !RESULT_TURN.test(text)) ?? '';
  if (RESULT_TURN.test(last) && !/\brepeatedly\b/i.test(said)) {
    return quoteResult(last.replace(RESULT_TURN, ''));
  }
  for (const [, uri, server] of system.matchAll(PROMPTED_RESOURCE)) {
    if (said.includes(uri!)) {
      return {
        kind: 'text',
        content: `<access_mcp_resource>\n<server_name>${server}</server_name>\n<uri>${uri}</uri>\n</access_mcp_resource>`,
      };
    }
  }
  for (const [, tool, server] of system.matchAll(PROMPTED_TOOL)) {
    if (mentions(said, tool!)) {
      return {
        kind: 'text',
        content: `I will ask ${server}.\n<use_mcp_tool>\n<server_name>${server}</server_name>\n<tool_name>${tool}</tool_name>\n<arguments>${argumentsIn(said) ?? '{}'}</arguments>\n</use_mcp_tool>`,
      };
    }
  }
  return null;
}

/** Models the mock answers like a music relay: a song's audio link in Markdown. */
export const MUSIC_MODEL = /suno|udio|chirp|music/i;

export function lastUserText(request: ChatCompletionRequest): string {
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
  return textOf(lastUser?.content ?? '');
}

/** What music relays answer in chat completions: the song's audio file as a link. */
export function songAnswer(prompt: string, audioUrl: string): Answer {
  return {
    kind: 'text',
    content: `Here is a song for “${prompt}”.\n\n[Listen to the song](${audioUrl})`,
  };
}

/**
 * The JSON text a model answers with under `response_format` (chat completions) or
 * `text.format` (Responses): a value valid against a `json_schema` format's schema; for
 * `json_object`, the JSON object written in the prompt when there is one, else the prompt
 * inside one. Null for plain text.
 */
export function structuredAnswer(format: unknown, said: string): string | null {
  const spec = format as
    { type?: unknown; json_schema?: { schema?: unknown }; schema?: unknown } | null | undefined;
  if (spec?.type === 'json_schema')
    // Chat completions nest the schema in `json_schema`; the Responses API does not.
    return JSON.stringify(schemaValue(spec.json_schema?.schema ?? spec.schema ?? {}));
  if (spec?.type !== 'json_object') return null;
  const written = argumentsIn(said);
  if (written) {
    try {
      const parsed: unknown = JSON.parse(written);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return written;
    } catch {
      // Not JSON after all: the prompt goes inside an object instead.
    }
  }
  return JSON.stringify({ echo: said });
}

const FORMAT_TYPES = ['text', 'json_object', 'json_schema'];

/**
 * OpenAI's 400 for a structured-output format it cannot use, or null. `nested` is where
 * chat completions keep the schema (`json_schema.schema`); the Responses API keeps it on
 * the format itself.
 */
export function invalidFormat(format: unknown, param: string, nested: boolean): string | null {
  if (format === undefined || format === null) return null;
  const spec = format as { type?: unknown; json_schema?: unknown; schema?: unknown };
  if (typeof format !== 'object' || Array.isArray(format) || typeof spec.type !== 'string')
    return `Missing required parameter: '${param}.type'.`;
  if (!FORMAT_TYPES.includes(spec.type))
    return `Invalid value: '${spec.type}'. Supported values are: ${FORMAT_TYPES.map((t) => `'${t}'`).join(', ')}.`;
  if (spec.type !== 'json_schema') return null;
  const holder = nested ? spec.json_schema : spec;
  const where = nested ? `${param}.json_schema` : param;
  if (typeof holder !== 'object' || holder === null)
    return `Missing required parameter: '${where}'.`;
  const { schema } = holder as { schema?: unknown };
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return `Invalid type for '${where}.schema': expected an object.`;
  return null;
}

export function answer(request: ChatCompletionRequest, reply?: string): Answer {
  const tools = request.tools ?? [];
  if (tools.length > 0 && request.tool_choice !== 'none') return nativeToolAnswer(request);
  const functions = request.functions ?? [];
  if (functions.length > 0 && request.function_call !== 'none') {
    const fn = functions[0]!;
    return { kind: 'function_call', call: { name: fn.name, arguments: exampleArguments(fn) } };
  }
  const prompted = promptedToolAnswer(request);
  if (prompted) return prompted;
  if (reply !== undefined) return { kind: 'text', content: reply };
  const structured = structuredAnswer(request.response_format, lastUserText(request));
  return { kind: 'text', content: structured ?? `Echo: ${lastUserText(request)}` };
}

export function completionTokens(result: Answer): number {
  if (result.kind === 'text') return approximateTokens(result.content);
  const call = result.kind === 'tool_call' ? result.call.function : result.call;
  return approximateTokens(call.name + call.arguments);
}

export function usageOf(promptTokens: number, completion: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
  };
}

export function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('hex')}`;
}

export const FINGERPRINT = `fp_${createHash('sha256').update('switchyard-mock').digest('hex').slice(0, 10)}`;

export function completionBody(
  id: string,
  model: string,
  result: Answer,
  usage: Usage | null,
): ChatCompletion {
  const message: ChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    content: null,
  };
  let finish: ChatCompletion['choices'][number]['finish_reason'] = 'stop';
  if (result.kind === 'text') message.content = result.content;
  if (result.kind === 'tool_call') {
    message.tool_calls = [result.call];
    finish = 'tool_calls';
  }
  if (result.kind === 'function_call') {
    message.function_call = result.call;
    finish = 'function_call';
  }
  const body: ChatCompletion = {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: FINGERPRINT,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage: usage ?? usageOf(0, 0),
  };
  if (!usage) delete (body as Partial<ChatCompletion>).usage;
  return body;
}

/** Splits text into streaming pieces the way providers do: a few characters at a time. */
export function pieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** The chunks of a streamed answer, without the final usage chunk. */
export function completionChunks(id: string, model: string, result: Answer): ChatCompletionChunk[] {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (
    delta: ChatCompletionChunk['choices'][number]['delta'],
    finish: string | null,
  ): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    system_fingerprint: FINGERPRINT,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const chunks = [chunk({ role: 'assistant', content: '' }, null)];
  if (result.kind === 'text') {
    for (const piece of pieces(result.content)) chunks.push(chunk({ content: piece }, null));
    chunks.push(chunk({}, 'stop'));
  } else if (result.kind === 'tool_call') {
    const { id: callId, function: fn } = result.call;
    chunks.push(
      chunk(
        {
          tool_calls: [
            { index: 0, id: callId, type: 'function', function: { name: fn.name, arguments: '' } },
          ],
        },
        null,
      ),
    );
    chunks.push(
      chunk(
        { tool_calls: [{ index: 0, function: { name: fn.name, arguments: fn.arguments } }] },
        null,
      ),
    );
    chunks.push(chunk({}, 'tool_calls'));
  } else {
    chunks.push(chunk({ function_call: { name: result.call.name, arguments: '' } }, null));
    chunks.push(chunk({ function_call: { arguments: result.call.arguments } }, null));
    chunks.push(chunk({}, 'function_call'));
  }
  return chunks;
}

export function usageChunk(id: string, model: string, usage: Usage): ChatCompletionChunk {
  return {
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: FINGERPRINT,
    choices: [],
    usage,
  };
}
