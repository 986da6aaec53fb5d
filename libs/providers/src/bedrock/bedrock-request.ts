import { type ChatMessage, type ContentPart } from '@switchyard/contracts';
import {
  completionBudget,
  dataUrlImage,
  functionTools,
  imageUrlOf,
  invalid,
  refuseUnconvertible,
  stopSequences,
  textOf,
  toolArguments,
} from '../openai-request.js';

// OpenAI chat-completion request → Bedrock Converse request
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).

type Block = Record<string, unknown>;

interface ConverseMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

/** The image formats Converse takes, by the media type of a data URL. */
const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/**
 * Converse takes image bytes (or an S3 location), never a web URL. The edge does not fetch
 * for the client (it would make the gateway a proxy to any address): an http(s) URL is a 400.
 */
function imageBlock(url: string, param: string): Block {
  const data = dataUrlImage(url);
  if (!data)
    throw invalid(
      'Images for this model must be sent as base64 data URLs (data:image/png;base64,…); image URLs are not fetched.',
      param,
    );
  const format = IMAGE_FORMATS[data.mediaType];
  if (!format) throw invalid('Images for this model must be PNG, JPEG, GIF or WebP.', param);
  return { image: { format, source: { bytes: data.data } } };
}

function contentBlocks(content: ChatMessage['content'], param: string): Block[] {
  if (content === null || content === undefined) return [];
  // Converse refuses blank text blocks.
  if (typeof content === 'string') return content.trim() === '' ? [] : [{ text: content }];
  return content.flatMap((part: ContentPart, index): Block[] => {
    const where = `${param}[${index}]`;
    if (part.type === 'text') {
      const text = (part as { text?: unknown }).text;
      return typeof text === 'string' && text.trim() !== '' ? [{ text }] : [];
    }
    if (part.type === 'image_url') return [imageBlock(imageUrlOf(part, where), where)];
    throw invalid(`Content parts of type \`${part.type}\` cannot be sent to this model.`, where);
  });
}

/** A tool result that is a JSON object travels as `json`, anything else as text. */
function toolResultContent(content: ChatMessage['content']): Block[] {
  const text = textOf(content);
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return [{ json: parsed }];
  } catch {
    // Plain text.
  }
  return [{ text: text === '' ? '(empty)' : text }];
}

/** Messages in Converse's alternation: consecutive turns of one role become one turn. */
function conversation(messages: ChatMessage[]): {
  system: Block[];
  messages: ConverseMessage[];
  usesTools: boolean;
} {
  const system: Block[] = [];
  const turns: ConverseMessage[] = [];
  let usesTools = false;
  const add = (role: ConverseMessage['role'], blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content);
        if (text.trim() !== '') system.push({ text });
        return;
      }
      case 'user':
        add('user', contentBlocks(message.content, `${param}.content`));
        return;
      case 'assistant': {
        const calls = (message.tool_calls ?? []).map((call, i) => ({
          toolUse: {
            toolUseId: call.id,
            name: call.function?.name,
            input: toolArguments(call, `${param}.tool_calls[${i}]`),
          },
        }));
        if (calls.length > 0) usesTools = true;
        add('assistant', [...contentBlocks(message.content, `${param}.content`), ...calls]);
        return;
      }
      case 'tool':
        if (typeof message.tool_call_id !== 'string')
          throw invalid('A tool message needs its `tool_call_id`.', `${param}.tool_call_id`);
        usesTools = true;
        add('user', [
          {
            toolResult: {
              toolUseId: message.tool_call_id,
              content: toolResultContent(message.content),
            },
          },
        ]);
        return;
      default:
        throw invalid(
          `Messages with role \`${message.role}\` cannot be sent to this model; use tools and tool messages.`,
          `${param}.role`,
        );
    }
  });
  return { system, messages: turns, usesTools };
}

/**
 * `toolConfig` from `tools` and `tool_choice`. Converse has no `none`: the tools are left out,
 * unless the conversation already holds tool calls or results, which Converse refuses
 * without a `toolConfig` (the model then chooses itself).
 */
function toolConfig(body: Record<string, unknown>, usesTools: boolean): Block | undefined {
  const declared = functionTools(body.tools);
  if (!declared) return undefined;
  const choice = body.tool_choice;
  if (choice === 'none' && !usesTools) return undefined;
  const tools = declared.map(({ name, description, parameters }) => ({
    toolSpec: {
      name,
      ...(description !== undefined ? { description } : {}),
      inputSchema: { json: parameters ?? { type: 'object', properties: {} } },
    },
  }));
  if (choice === undefined || choice === null || choice === 'none') return { tools };
  if (choice === 'auto') return { tools, toolChoice: { auto: {} } };
  if (choice === 'required') return { tools, toolChoice: { any: {} } };
  const named = (choice as { function?: { name?: unknown } }).function?.name;
  if (typeof named === 'string') return { tools, toolChoice: { tool: { name: named } } };
  throw invalid("'tool_choice' must be auto, required, none or a named function.", 'tool_choice');
}

export function toConverseRequest(body: Record<string, unknown>): Record<string, unknown> {
  refuseUnconvertible(body);
  const format = (body.response_format as { type?: unknown } | undefined)?.type;
  if (format !== undefined && format !== 'text')
    throw invalid(
      '`response_format` other than text is not supported by this model.',
      'response_format',
    );
  const { system, messages, usesTools } = conversation(body.messages as ChatMessage[]);
  const request: Record<string, unknown> = { messages };
  if (system.length > 0) request.system = system;
  const inference: Record<string, unknown> = {};
  const budget = completionBudget(body);
  if (budget !== undefined) inference.maxTokens = budget;
  if (typeof body.temperature === 'number') inference.temperature = body.temperature;
  if (typeof body.top_p === 'number') inference.topP = body.top_p;
  const stop = stopSequences(body.stop);
  if (stop) inference.stopSequences = stop;
  if (Object.keys(inference).length > 0) request.inferenceConfig = inference;
  const tools = toolConfig(body, usesTools);
  if (tools) request.toolConfig = tools;
  return request;
}
