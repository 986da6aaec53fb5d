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
import { splitToolCallId } from './gemini-tool-calls.js';

// OpenAI chat-completion request → Gemini `generateContent` request
// (https://ai.google.dev/api/generate-content, https://ai.google.dev/gemini-api/docs/function-calling).

type Part = Record<string, unknown>;

interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

function imagePart(url: string, param: string): Part {
  const data = dataUrlImage(url);
  if (data) return { inlineData: { mimeType: data.mediaType, data: data.data } };
  // Gemini takes no image URLs other than its own file URIs; fetching is not the edge's job.
  throw invalid(
    'Images for this model must be data URLs (base64); http(s) image URLs are not fetched.',
    param,
  );
}

function parts(content: ChatMessage['content'], param: string): Part[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  return content.flatMap((part: ContentPart, index): Part[] => {
    const where = `${param}[${index}]`;
    if (part.type === 'text') {
      const text = (part as { text?: unknown }).text;
      return typeof text === 'string' && text !== '' ? [{ text }] : [];
    }
    if (part.type === 'image_url') return [imagePart(imageUrlOf(part, where), where)];
    throw invalid(`Content parts of type \`${part.type}\` cannot be sent to this model.`, where);
  });
}

/** A tool's output as the object Gemini wants: JSON objects as they are, anything else as `output`. */
function functionOutput(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // Plain text: wrapped below.
  }
  return { output: text };
}

/**
 * Gemini's turns: consecutive messages of one role merge, so parallel function responses
 * travel in one turn right after their calls, as Gemini requires.
 */
function conversation(messages: ChatMessage[]): { system: Part[]; contents: Content[] } {
  const system: Part[] = [];
  const contents: Content[] = [];
  /** Tool call id → function name: Gemini answers calls by name, OpenAI by id. */
  const calledNames = new Map<string, string>();
  const add = (role: Content['role'], added: Part[]): void => {
    if (added.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...added);
    else contents.push({ role, parts: added });
  };
  messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...parts(message.content, `${param}.content`));
        return;
      case 'user':
        add('user', parts(message.content, `${param}.content`));
        return;
      case 'assistant':
        add('model', [
          ...parts(message.content, `${param}.content`),
          ...(message.tool_calls ?? []).map((call, i): Part => {
            const where = `${param}.tool_calls[${i}]`;
            const name = call.function?.name;
            if (typeof name !== 'string' || name === '')
              throw invalid('A tool call needs its function name.', `${where}.function.name`);
            if (typeof call.id === 'string') calledNames.set(call.id, name);
            const { signature } = splitToolCallId(call.id);
            return {
              functionCall: { name, args: toolArguments(call, where) },
              ...(signature ? { thoughtSignature: signature } : {}),
            };
          }),
        ]);
        return;
      case 'tool': {
        const name = calledNames.get(message.tool_call_id ?? '');
        if (name === undefined)
          throw invalid(
            'A tool message must answer a tool call of an earlier assistant message (`tool_call_id`).',
            `${param}.tool_call_id`,
          );
        add('user', [
          { functionResponse: { name, response: functionOutput(textOf(message.content)) } },
        ]);
        return;
      }
      default:
        throw invalid(
          `Messages with role \`${message.role}\` cannot be sent to this model; use tools and tool messages.`,
          `${param}.role`,
        );
    }
  });
  return { system, contents };
}

function toolConfig(value: unknown): Part | undefined {
  if (value === undefined || value === null) return undefined;
  const mode = { auto: 'AUTO', required: 'ANY', none: 'NONE' }[value as string];
  if (mode) return { functionCallingConfig: { mode } };
  const named = (value as { function?: { name?: unknown } }).function?.name;
  if (typeof named === 'string')
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [named] } };
  throw invalid("'tool_choice' must be auto, required, none or a named function.", 'tool_choice');
}

/** `response_format` as Gemini's JSON mode: a MIME type, and the schema when one is given. */
function responseFormat(value: unknown): Part {
  const format = value as { type?: unknown; json_schema?: { schema?: unknown } } | undefined;
  switch (format?.type) {
    case undefined:
    case 'text':
      return {};
    case 'json_object':
      return { responseMimeType: 'application/json' };
    case 'json_schema':
      return {
        responseMimeType: 'application/json',
        ...(format.json_schema?.schema ? { responseJsonSchema: format.json_schema.schema } : {}),
      };
    default:
      throw invalid(
        '`response_format` must be text, json_object or json_schema.',
        'response_format',
      );
  }
}

function generationConfig(body: Record<string, unknown>): Part {
  const config: Part = {};
  const copied = {
    temperature: 'temperature',
    top_p: 'topP',
    presence_penalty: 'presencePenalty',
    frequency_penalty: 'frequencyPenalty',
    seed: 'seed',
  } as const;
  for (const [from, to] of Object.entries(copied)) {
    if (typeof body[from] === 'number') config[to] = body[from];
  }
  const budget = completionBudget(body);
  if (budget !== undefined) config.maxOutputTokens = budget;
  const stop = stopSequences(body.stop);
  if (stop) config.stopSequences = stop;
  return { ...config, ...responseFormat(body.response_format) };
}

export function toGeminiRequest(body: Record<string, unknown>): Record<string, unknown> {
  refuseUnconvertible(body);
  const { system, contents } = conversation(body.messages as ChatMessage[]);
  const request: Record<string, unknown> = { contents };
  if (system.length > 0) request.systemInstruction = { parts: system };
  const declared = functionTools(body.tools);
  if (declared) {
    request.tools = [
      {
        // `parametersJsonSchema` takes the JSON Schema clients write as it is; the older
        // `parameters` takes an OpenAPI subset and refuses keywords such as
        // `additionalProperties`.
        functionDeclarations: declared.map(({ name, description, parameters }) => ({
          name,
          ...(description !== undefined ? { description } : {}),
          ...(parameters !== undefined ? { parametersJsonSchema: parameters } : {}),
        })),
      },
    ];
    const choice = toolConfig(body.tool_choice);
    if (choice) request.toolConfig = choice;
  }
  const config = generationConfig(body);
  if (Object.keys(config).length > 0) request.generationConfig = config;
  return request;
}
