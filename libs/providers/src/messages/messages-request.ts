import { invalid } from '../openai-request.js';

// Anthropic's Messages API in front of the gateway (docs/providers.md, "Anthropic's API in
// front"): an Anthropic request (https://docs.anthropic.com/en/api/messages) → an OpenAI chat
// completion request, for every channel that is not `anthropic`. What has no OpenAI
// equivalent is refused with a 400 rather than dropped; what only tunes Anthropic's own
// service (prompt caching, extended thinking) is left out.

type Block = Record<string, unknown> & { type?: unknown };
type ChatMessage = Record<string, unknown>;

function text(block: Block, param: string): string {
  if (typeof block.text !== 'string') throw invalid('A text block needs its `text`.', param);
  return block.text;
}

function blocksOf(content: unknown, param: string): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid('`content` must be a string or an array.', param);
  // The edge checks only a message's own blocks: nested ones (a tool result's, the system's)
  // reach here as the client sent them.
  const index = content.findIndex((block) => typeof block !== 'object' || block === null);
  if (index >= 0) throw invalid('Content blocks are objects with a `type`.', `${param}[${index}]`);
  return content as Block[];
}

function imagePart(block: Block, param: string): ChatMessage {
  const source = block.source as
    { type?: unknown; media_type?: unknown; data?: unknown; url?: unknown } | undefined;
  if (source?.type === 'base64' && typeof source.data === 'string')
    return {
      type: 'image_url',
      image_url: { url: `data:${String(source.media_type)};base64,${source.data}` },
    };
  if (source?.type === 'url' && typeof source.url === 'string')
    return { type: 'image_url', image_url: { url: source.url } };
  throw invalid(
    'Images must come as base64 or a URL when the model is not served by Anthropic.',
    `${param}.source`,
  );
}

function unconvertible(block: Block, param: string): never {
  throw invalid(
    `Content blocks of type \`${String(block.type)}\` cannot be sent to this model (it is not served by Anthropic).`,
    param,
  );
}

/** A tool result's content as the text of an OpenAI tool message. */
function toolResultText(block: Block, param: string): string {
  if (block.content === undefined) return '';
  return blocksOf(block.content, `${param}.content`)
    .map((part, index) =>
      part.type === 'text' ? text(part, `${param}.content[${index}]`) : unconvertible(part, param),
    )
    .join('');
}

/**
 * One user turn: its tool results become tool messages first (OpenAI wants them right
 * after the assistant's tool calls), then what the user said.
 */
function userMessages(blocks: Block[], param: string): ChatMessage[] {
  const results: ChatMessage[] = [];
  const parts: ChatMessage[] = [];
  blocks.forEach((block, index) => {
    const where = `${param}[${index}]`;
    if (block.type === 'text') parts.push({ type: 'text', text: text(block, where) });
    else if (block.type === 'image') parts.push(imagePart(block, where));
    else if (block.type === 'tool_result') {
      if (typeof block.tool_use_id !== 'string')
        throw invalid('A tool_result block needs its `tool_use_id`.', where);
      const text = toolResultText(block, where);
      // OpenAI's tool message has no error flag; a failed call's output is the error object
      // OpenAI's function-calling guide returns, which Gemini's functionResponse takes as
      // its error and the anthropic adapter reads back as `is_error` (docs/providers.md).
      results.push({
        role: 'tool',
        tool_call_id: block.tool_use_id,
        content: block.is_error === true ? JSON.stringify({ error: text }) : text,
      });
    } else unconvertible(block, where);
  });
  if (parts.length === 0) return results;
  const onlyText = parts.every((part) => part.type === 'text');
  const content = onlyText ? parts.map((part) => part.text as string).join('') : parts;
  return [...results, { role: 'user', content }];
}

function assistantMessage(blocks: Block[], param: string): ChatMessage {
  let content = '';
  const toolCalls: ChatMessage[] = [];
  blocks.forEach((block, index) => {
    const where = `${param}[${index}]`;
    if (block.type === 'text') content += text(block, where);
    else if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string')
        throw invalid('A tool_use block needs its `id` and `name`.', where);
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
    // Thinking is signed by Anthropic for its own models: no other model can read it back.
    else if (block.type !== 'thinking' && block.type !== 'redacted_thinking')
      unconvertible(block, where);
  });
  return {
    role: 'assistant',
    content: content === '' && toolCalls.length > 0 ? null : content,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
}

function systemMessage(system: unknown): ChatMessage[] {
  if (system === undefined || system === null) return [];
  const content = blocksOf(system, 'system')
    .map((block, index) =>
      block.type === 'text'
        ? text(block, `system[${index}]`)
        : unconvertible(block, `system[${index}]`),
    )
    .join('\n');
  return content === '' ? [] : [{ role: 'system', content }];
}

function tools(value: unknown): ChatMessage[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalid('`tools` must be an array.', 'tools');
  return value.map((declared: unknown, index) => {
    if (typeof declared !== 'object' || declared === null)
      throw invalid('A tool must be an object.', `tools[${index}]`);
    const tool = declared as Block;
    // Server tools (web search, code execution, computer use) run at Anthropic only.
    if ((tool.type !== undefined && tool.type !== 'custom') || typeof tool.name !== 'string')
      throw invalid(
        'Only custom tools with a `name` can be sent to this model (it is not served by Anthropic).',
        `tools[${index}]`,
      );
    return {
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        parameters: tool.input_schema ?? { type: 'object', properties: {} },
      },
    };
  });
}

function toolChoice(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  const choice = value as { type?: unknown; name?: unknown; disable_parallel_tool_use?: unknown };
  const serial = choice.disable_parallel_tool_use === true ? { parallel_tool_calls: false } : {};
  switch (choice.type) {
    case 'auto':
      return { tool_choice: 'auto', ...serial };
    case 'any':
      return { tool_choice: 'required', ...serial };
    case 'none':
      return { tool_choice: 'none' };
    case 'tool':
      if (typeof choice.name === 'string')
        return { tool_choice: { type: 'function', function: { name: choice.name } }, ...serial };
  }
  throw invalid('`tool_choice` must be auto, any, none or a named tool.', 'tool_choice');
}

/** Request fields with no OpenAI equivalent: refused rather than silently ignored. */
const REFUSED = ['top_k', 'container', 'mcp_servers'] as const;

/** The Anthropic request (already checked by the edge) as an OpenAI chat completion request. */
export function messagesToChatRequest(body: Record<string, unknown>): Record<string, unknown> {
  for (const name of REFUSED) {
    if (body[name] !== undefined && body[name] !== null)
      throw invalid(
        `\`${name}\` cannot be sent to this model (it is not served by Anthropic).`,
        name,
      );
  }
  const messages: ChatMessage[] = systemMessage(body.system);
  (body.messages as { role: string; content: unknown }[]).forEach((message, index) => {
    const param = `messages[${index}].content`;
    const blocks = blocksOf(message.content, param);
    if (message.role === 'assistant') messages.push(assistantMessage(blocks, param));
    else messages.push(...userMessages(blocks, param));
  });
  const request: Record<string, unknown> = {
    model: body.model,
    messages,
    max_tokens: body.max_tokens,
  };
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0)
    request.stop = body.stop_sequences;
  for (const name of ['temperature', 'top_p'] as const) {
    if (typeof body[name] === 'number') request[name] = body[name];
  }
  const declared = tools(body.tools);
  if (declared && declared.length > 0) {
    request.tools = declared;
    Object.assign(request, toolChoice(body.tool_choice));
  }
  const user = (body.metadata as { user_id?: unknown } | undefined)?.user_id;
  if (typeof user === 'string') request.user = user;
  if (body.stream === true) {
    request.stream = true;
    // The final usage comes in a last chunk only when asked for.
    request.stream_options = { include_usage: true };
  }
  return request;
}
