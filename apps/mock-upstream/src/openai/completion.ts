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
// it was told to), and calls the first offered tool when tools or functions are offered.
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

export function answer(request: ChatCompletionRequest, reply?: string): Answer {
  const tools = request.tools ?? [];
  const choice = request.tool_choice as { function?: { name?: string } } | string | undefined;
  if (tools.length > 0 && choice !== 'none') {
    const named = typeof choice === 'object' ? choice?.function?.name : undefined;
    const tool = tools.find((t) => t.function.name === named) ?? tools[0]!;
    return {
      kind: 'tool_call',
      call: {
        id: `call_${randomBytes(6).toString('hex')}`,
        type: 'function',
        function: { name: tool.function.name, arguments: exampleArguments(tool.function) },
      },
    };
  }
  const functions = request.functions ?? [];
  if (functions.length > 0 && request.function_call !== 'none') {
    const fn = functions[0]!;
    return { kind: 'function_call', call: { name: fn.name, arguments: exampleArguments(fn) } };
  }
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
  return { kind: 'text', content: reply ?? `Echo: ${textOf(lastUser?.content ?? '')}` };
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
