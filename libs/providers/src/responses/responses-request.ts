import { GatewayError } from '@switchyard/contracts';
import { invalid } from '../openai-request.js';

// OpenAI's Responses API in front of the gateway (docs/providers.md, "OpenAI's Responses
// API in front"): a Responses request (https://platform.openai.com/docs/api-reference/responses)
// → an OpenAI chat completion request, for every channel that is not `openai`. The
// Responses API keeps state at OpenAI (stored responses, conversations, background runs)
// and runs built-in tools there: a converted channel has none of it, so such a request is
// a 400 `unsupported_parameter` naming the field rather than an answer that silently
// forgot the conversation.

type Item = Record<string, unknown> & { type?: unknown };
type ChatMessage = Record<string, unknown>;
/** The assistant turn that text and function calls join: text until it has calls. */
type AssistantMessage = { role: 'assistant'; content: string | null; tool_calls?: ChatMessage[] };

/** A client's value in an error message: strings as they are, anything else as JSON. */
function shown(value: unknown): string {
  if (value === undefined) return 'undefined';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function unsupported(message: string, param: string): GatewayError {
  return new GatewayError('unsupported_parameter', message, param);
}

const NOT_KEPT = 'this model is not served by OpenAI, and the gateway keeps no responses';

/**
 * The first field of a Responses request that needs what only OpenAI keeps or runs, as the
 * 400 to answer when the request would be converted; null when any channel can serve it.
 * The edge asks this before each converted attempt, so such a request fails over only to
 * `openai` channels.
 */
export function responsesStateRefusal(body: Record<string, unknown>): GatewayError | null {
  if (body.previous_response_id !== undefined && body.previous_response_id !== null)
    return unsupported(
      `\`previous_response_id\` cannot be used with this model: ${NOT_KEPT}. Send the whole conversation in \`input\`.`,
      'previous_response_id',
    );
  if (body.conversation !== undefined && body.conversation !== null)
    return unsupported(
      `\`conversation\` cannot be used with this model: ${NOT_KEPT}. Send the whole conversation in \`input\`.`,
      'conversation',
    );
  if (body.store === true)
    return unsupported(
      `\`store: true\` cannot be used with this model: ${NOT_KEPT}. Send \`store: false\` or leave it out.`,
      'store',
    );
  if (body.background === true)
    return unsupported(`\`background\` cannot be used with this model: ${NOT_KEPT}.`, 'background');
  if (body.prompt !== undefined && body.prompt !== null)
    return unsupported(
      `\`prompt\` (a stored prompt template) cannot be used with this model: ${NOT_KEPT}.`,
      'prompt',
    );
  if (body.truncation === 'auto')
    return unsupported(
      '`truncation: auto` cannot be used with this model (it is not served by OpenAI).',
      'truncation',
    );
  if (Array.isArray(body.tools)) {
    const tools = body.tools as Item[];
    const index = tools.findIndex((tool) => tool?.type !== 'function');
    if (index >= 0)
      return unsupported(
        `Built-in tools (\`${shown(tools[index]?.type)}\`) run at OpenAI only: this model is not served by OpenAI. Send function tools.`,
        `tools[${index}]`,
      );
  }
  if (Array.isArray(body.input)) {
    const index = (body.input as Item[]).findIndex((item) => item?.type === 'item_reference');
    if (index >= 0)
      return unsupported(
        `\`item_reference\` items cannot be used with this model: ${NOT_KEPT}. Send the items themselves.`,
        `input[${index}]`,
      );
  }
  return null;
}

function textOf(part: Item, param: string): string {
  if (typeof part.text !== 'string') throw invalid('A text part needs its `text`.', param);
  return part.text;
}

function imagePart(part: Item, param: string): ChatMessage {
  if (typeof part.image_url !== 'string' || part.image_url === '')
    throw invalid(
      'Images must come as a URL or a data URL when the model is not served by OpenAI (not as a file id).',
      param,
    );
  const detail = typeof part.detail === 'string' ? { detail: part.detail } : {};
  return { type: 'image_url', image_url: { url: part.image_url, ...detail } };
}

/** A message item's content as a chat message's: a string when it is text only. */
function messageContent(content: unknown, param: string): string | ChatMessage[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid('`content` must be a string or an array.', param);
  const parts = (content as Item[]).map((part, index): ChatMessage => {
    const where = `${param}[${index}]`;
    switch (part?.type) {
      case 'input_text':
      case 'output_text':
        return { type: 'text', text: textOf(part, where) };
      case 'refusal':
        return { type: 'text', text: typeof part.refusal === 'string' ? part.refusal : '' };
      case 'input_image':
        return imagePart(part, where);
      default:
        throw invalid(
          `Content parts of type \`${String(part?.type)}\` cannot be sent to this model (it is not served by OpenAI).`,
          where,
        );
    }
  });
  return parts.every((part) => part.type === 'text')
    ? parts.map((part) => part.text as string).join('')
    : parts;
}

/** A function call output's text; given as parts, its text parts joined. */
function outputText(output: unknown, param: string): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output))
    throw invalid('`output` must be a string or an array of text parts.', param);
  return (output as Item[])
    .map((part, index) => {
      if (part?.type === 'input_text' || part?.type === 'output_text')
        return textOf(part, `${param}[${index}]`);
      throw invalid(
        `A function call output can hold text only when the model is not served by OpenAI (not \`${String(part?.type)}\`).`,
        `${param}[${index}]`,
      );
    })
    .join('');
}

/**
 * The input items as chat messages, in order. Function calls join the assistant message
 * just before them (OpenAI's chat format carries text and tool calls in one turn), and
 * their outputs become tool messages.
 */
function inputMessages(input: unknown): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input))
    throw invalid('`input` must be a string or an array of items.', 'input');
  const messages: ChatMessage[] = [];
  let assistant: AssistantMessage | null = null;
  (input as Item[]).forEach((item, index) => {
    const where = `input[${index}]`;
    if (typeof item !== 'object' || item === null)
      throw invalid('An input item must be an object.', where);
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role;
      if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer')
        throw invalid(
          'A message item needs a role: user, assistant, system or developer.',
          `${where}.role`,
        );
      const content = messageContent(item.content, `${where}.content`);
      if (role === 'assistant') {
        const text = typeof content === 'string' ? content : '';
        if (assistant && assistant.tool_calls === undefined) assistant.content += text;
        else {
          assistant = { role: 'assistant', content: text };
          messages.push(assistant);
        }
        return;
      }
      assistant = null;
      messages.push({ role, content });
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string')
        throw invalid('A function_call item needs its `call_id` and `name`.', where);
      if (!assistant) {
        assistant = { role: 'assistant', content: null };
        messages.push(assistant);
      }
      if (assistant.content === '') assistant.content = null;
      const calls = (assistant.tool_calls ??= []);
      calls.push({
        id: item.call_id,
        type: 'function',
        function: {
          name: item.name,
          arguments: typeof item.arguments === 'string' ? item.arguments : '{}',
        },
      });
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string')
        throw invalid('A function_call_output item needs its `call_id`.', where);
      assistant = null;
      messages.push({
        role: 'tool',
        tool_call_id: item.call_id,
        content: outputText(item.output, `${where}.output`),
      });
    }
    // Reasoning is encrypted by OpenAI for its own models: no other model can read it back.
    else if (type !== 'reasoning')
      throw invalid(
        `Input items of type \`${shown(type)}\` cannot be sent to this model (it is not served by OpenAI).`,
        where,
      );
  });
  return messages;
}

function tools(value: unknown): ChatMessage[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return (value as Item[]).map((tool, index) => {
    if (typeof tool.name !== 'string')
      throw invalid('A function tool needs its `name`.', `tools[${index}]`);
    return {
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        parameters: tool.parameters ?? { type: 'object', properties: {} },
        ...(typeof tool.strict === 'boolean' ? { strict: tool.strict } : {}),
      },
    };
  });
}

function toolChoice(value: unknown): unknown {
  if (value === 'auto' || value === 'none' || value === 'required') return value;
  const choice = value as { type?: unknown; name?: unknown } | null;
  if (choice?.type === 'function' && typeof choice.name === 'string')
    return { type: 'function', function: { name: choice.name } };
  throw unsupported(
    '`tool_choice` must be auto, none, required or a named function when the model is not served by OpenAI.',
    'tool_choice',
  );
}

/** `text.format` as chat's `response_format`; plain text needs none. */
function responseFormat(text: unknown): Record<string, unknown> | undefined {
  const format = (text as { format?: Item } | null | undefined)?.format;
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const { name, schema, strict, description } = format;
    return {
      type: 'json_schema',
      json_schema: {
        name,
        schema,
        ...(typeof strict === 'boolean' ? { strict } : {}),
        ...(typeof description === 'string' ? { description } : {}),
      },
    };
  }
  throw invalid('`text.format` must be text, json_object or json_schema.', 'text.format');
}

/** The Responses request (already checked by the edge) as an OpenAI chat completion request. */
export function responsesToChatRequest(body: Record<string, unknown>): Record<string, unknown> {
  const refusal = responsesStateRefusal(body);
  if (refusal) throw refusal;
  const messages: ChatMessage[] = [];
  if (typeof body.instructions === 'string' && body.instructions !== '')
    messages.push({ role: 'system', content: body.instructions });
  messages.push(...inputMessages(body.input));
  const request: Record<string, unknown> = { model: body.model, messages };
  if (typeof body.max_output_tokens === 'number') request.max_tokens = body.max_output_tokens;
  for (const name of ['temperature', 'top_p', 'parallel_tool_calls'] as const) {
    if (body[name] !== undefined && body[name] !== null) request[name] = body[name];
  }
  const user = body.safety_identifier ?? body.user;
  if (typeof user === 'string') request.user = user;
  const effort = (body.reasoning as { effort?: unknown } | null | undefined)?.effort;
  if (typeof effort === 'string') request.reasoning_effort = effort;
  const format = responseFormat(body.text);
  if (format) request.response_format = format;
  const declared = tools(body.tools);
  if (declared) {
    request.tools = declared;
    if (body.tool_choice !== undefined && body.tool_choice !== null)
      request.tool_choice = toolChoice(body.tool_choice);
  }
  if (body.stream === true) {
    request.stream = true;
    // The final usage comes in a last chunk only when asked for.
    request.stream_options = { include_usage: true };
  }
  return request;
}
