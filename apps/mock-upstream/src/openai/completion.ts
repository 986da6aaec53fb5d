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

// How the mock answers a chat completion: it echoes the last user message (or says what
// it was told to), and uses the tools it is offered (below).
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

/** Example arguments for a function: every required property filled with a placeholder. */
function exampleArguments(fn: FunctionDefinition): string {
  const schema = fn.parameters as
    | { properties?: Record<string, { type?: string; enum?: unknown[] }>; required?: string[] }
    | undefined;
  const args: Record<string, unknown> = {};
  for (const name of schema?.required ?? Object.keys(schema?.properties ?? {})) {
    const property = schema?.properties?.[name];
    if (property?.enum?.length) args[name] = property.enum[0];
    else if (property?.type === 'number' || property?.type === 'integer') args[name] = 1;
    else if (property?.type === 'boolean') args[name] = true;
    else args[name] = `example ${name}`;
  }
  return JSON.stringify(args);
}

export type Answer =
  | { kind: 'text'; content: string }
  | { kind: 'tool_call'; call: ToolCall }
  | { kind: 'function_call'; call: { name: string; arguments: string } };

// Deterministic tool use, for the chat app's tool loop (docs/tools.md):
// - offered tools natively, it calls the tool named in the last user message with the
//   JSON object written there (the first tool with placeholder arguments when none is
//   named); given tool results, it answers quoting the last one;
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
        arguments: named ? (argumentsIn(said) ?? '{}') : exampleArguments(tool.function),
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
  return { kind: 'text', content: reply ?? `Echo: ${lastUserText(request)}` };
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
