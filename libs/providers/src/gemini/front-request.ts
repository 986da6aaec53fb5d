import { invalid } from '../openai-request.js';

// Gemini's API in front of the gateway (docs/providers.md, "Gemini's API in front"): a
// `generateContent` request (https://ai.google.dev/api/generate-content) as the OpenAI chat
// completion every other channel's adapter takes, and Gemini's embeddings requests
// (https://ai.google.dev/api/embeddings) as OpenAI's. A `gemini` channel gets the client's
// request as it came; these are for the others.

type Json = Record<string, unknown>;

interface Part {
  text?: unknown;
  thought?: unknown;
  inlineData?: { mimeType?: unknown; data?: unknown };
  fileData?: unknown;
  functionCall?: { id?: unknown; name?: unknown; args?: unknown };
  functionResponse?: { id?: unknown; name?: unknown; response?: unknown };
}

interface Content {
  role?: unknown;
  parts?: unknown;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function partsOf(content: unknown, param: string): Part[] {
  const parts = isObject(content) ? content.parts : undefined;
  if (!Array.isArray(parts) || !parts.every(isObject))
    throw invalid(`'${param}.parts' must be an array of parts.`, `${param}.parts`);
  return parts;
}

/** Gemini's schemas (an OpenAPI subset, types in capitals) as the JSON Schema OpenAI takes. */
export function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    // Google's own ordering hint, no JSON Schema keyword.
    if (key === 'propertyOrdering' || key === 'nullable') continue;
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'properties' && isObject(value))
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [name, jsonSchemaOf(property)]),
      );
    else out[key] = jsonSchemaOf(value);
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

/** Call ids by function name, for the responses that answer them by name alone. */
class CallIds {
  private readonly open = new Map<string, string[]>();
  private count = 0;

  call(name: string, id: unknown): string {
    const callId = typeof id === 'string' && id !== '' ? id : `call_${++this.count}`;
    this.open.set(name, [...(this.open.get(name) ?? []), callId]);
    return callId;
  }

  answer(name: string, id: unknown, param: string): string {
    const waiting = this.open.get(name) ?? [];
    const at = typeof id === 'string' ? waiting.indexOf(id) : 0;
    if (waiting.length === 0 || at < 0)
      throw invalid(
        `A functionResponse must answer a functionCall of an earlier model turn (no open call of '${name}').`,
        param,
      );
    return waiting.splice(at, 1)[0]!;
  }
}

function imageUrl(part: Part, where: string): Json {
  const { mimeType, data } = part.inlineData ?? {};
  if (typeof mimeType !== 'string' || typeof data !== 'string')
    throw invalid("'inlineData' needs its 'mimeType' and base64 'data'.", `${where}.inlineData`);
  if (!mimeType.startsWith('image/'))
    throw invalid(
      `Inline data of type ${mimeType} cannot be sent to this model; only images can.`,
      `${where}.inlineData.mimeType`,
    );
  return { type: 'image_url', image_url: { url: `data:${mimeType};base64,${data}` } };
}

/** A user turn: its text and images as one message, each function response as a tool message. */
function userMessages(parts: Part[], param: string, calls: CallIds): Json[] {
  const messages: Json[] = [];
  const content: Json[] = [];
  parts.forEach((part, index) => {
    const where = `${param}.parts[${index}]`;
    if (typeof part.text === 'string') content.push({ type: 'text', text: part.text });
    else if (part.inlineData) content.push(imageUrl(part, where));
    else if (part.functionResponse) {
      const { id, name, response } = part.functionResponse;
      if (typeof name !== 'string' || name === '')
        throw invalid('A functionResponse needs its name.', `${where}.functionResponse.name`);
      messages.push({
        role: 'tool',
        tool_call_id: calls.answer(name, id, `${where}.functionResponse`),
        content: JSON.stringify(response ?? {}),
      });
    } else throw unconvertiblePart(part, where);
  });
  if (content.length === 0) return messages;
  const onlyText = content.every((c) => c.type === 'text');
  const message = {
    role: 'user',
    content: onlyText ? content.map((c) => c.text as string).join('') : content,
  };
  // Tool results answer the model's last turn: they come before what the user adds.
  return [...messages, message];
}

function modelMessage(parts: Part[], param: string, calls: CallIds): Json {
  let text = '';
  const toolCalls: Json[] = [];
  parts.forEach((part, index) => {
    const where = `${param}.parts[${index}]`;
    // Thought summaries are the model's own notes, not its answer.
    if (part.thought === true) return;
    if (typeof part.text === 'string') text += part.text;
    else if (part.functionCall) {
      const { id, name, args } = part.functionCall;
      if (typeof name !== 'string' || name === '')
        throw invalid('A functionCall needs its name.', `${where}.functionCall.name`);
      toolCalls.push({
        id: calls.call(name, id),
        type: 'function',
        function: { name, arguments: JSON.stringify(args ?? {}) },
      });
    } else throw unconvertiblePart(part, where);
  });
  return {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
}

function unconvertiblePart(part: Part, where: string): Error {
  const kind = Object.keys(part)[0] ?? 'empty';
  return invalid(
    `Parts of kind '${kind}' cannot be sent to this model (it is not served by Gemini).`,
    where,
  );
}

function systemMessage(instruction: unknown): Json[] {
  if (instruction === undefined || instruction === null) return [];
  if (typeof instruction === 'string') return [{ role: 'system', content: instruction }];
  const text = partsOf(instruction, 'systemInstruction')
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .join('');
  return text === '' ? [] : [{ role: 'system', content: text }];
}

function tools(value: unknown): Json[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalid("'tools' must be an array.", 'tools');
  return value.flatMap((tool: unknown, index): Json[] => {
    const declarations = isObject(tool) ? tool.functionDeclarations : undefined;
    const others = isObject(tool)
      ? Object.keys(tool).filter((k) => k !== 'functionDeclarations')
      : [];
    if (!Array.isArray(declarations) || others.length > 0)
      throw invalid(
        `Only functionDeclarations can be sent to this model (it is not served by Gemini)${others.length ? `, not ${others.join(', ')}` : ''}.`,
        `tools[${index}]`,
      );
    return declarations.map((declaration: unknown, at): Json => {
      const d = isObject(declaration) ? declaration : {};
      if (typeof d.name !== 'string' || d.name === '')
        throw invalid(
          'A function declaration needs its name.',
          `tools[${index}].functionDeclarations[${at}].name`,
        );
      const parameters = d.parametersJsonSchema ?? jsonSchemaOf(d.parameters);
      return {
        type: 'function',
        function: {
          name: d.name,
          ...(typeof d.description === 'string' ? { description: d.description } : {}),
          ...(parameters !== undefined ? { parameters } : {}),
        },
      };
    });
  });
}

function toolChoice(config: unknown): Json {
  const calling = isObject(config) ? config.functionCallingConfig : undefined;
  if (!isObject(calling)) return {};
  const names = Array.isArray(calling.allowedFunctionNames) ? calling.allowedFunctionNames : [];
  switch (calling.mode) {
    case undefined:
    case 'MODE_UNSPECIFIED':
    case 'AUTO':
      return { tool_choice: 'auto' };
    case 'NONE':
      return { tool_choice: 'none' };
    case 'ANY':
    case 'VALIDATED':
      return names.length === 1 && typeof names[0] === 'string'
        ? { tool_choice: { type: 'function', function: { name: names[0] } } }
        : { tool_choice: 'required' };
    default:
      throw invalid(
        "'toolConfig.functionCallingConfig.mode' must be AUTO, ANY or NONE.",
        'toolConfig.functionCallingConfig.mode',
      );
  }
}

/** JSON mode: a schema when one is given (Gemini's own or JSON Schema), else any JSON object. */
function responseFormat(config: Json): Json {
  const mime = config.responseMimeType;
  if (mime === undefined || mime === 'text/plain') return {};
  if (mime !== 'application/json')
    throw invalid(
      "'generationConfig.responseMimeType' must be text/plain or application/json for this model.",
      'generationConfig.responseMimeType',
    );
  const schema = config.responseJsonSchema ?? jsonSchemaOf(config.responseSchema);
  if (schema === undefined) return { response_format: { type: 'json_object' } };
  return { response_format: { type: 'json_schema', json_schema: { name: 'response', schema } } };
}

function generationConfig(value: unknown): Json {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw invalid("'generationConfig' must be an object.", 'generationConfig');
  if (typeof value.candidateCount === 'number' && value.candidateCount > 1)
    throw invalid(
      'This model returns one candidate per request (`candidateCount` must be 1).',
      'generationConfig.candidateCount',
    );
  if (value.topK !== undefined && value.topK !== null)
    throw invalid(
      '`topK` cannot be sent to this model (it is not served by Gemini).',
      'generationConfig.topK',
    );
  const request: Json = {};
  const copied = {
    temperature: 'temperature',
    topP: 'top_p',
    presencePenalty: 'presence_penalty',
    frequencyPenalty: 'frequency_penalty',
    seed: 'seed',
    maxOutputTokens: 'max_tokens',
  } as const;
  for (const [from, to] of Object.entries(copied))
    if (typeof value[from] === 'number') request[to] = value[from];
  if (Array.isArray(value.stopSequences) && value.stopSequences.length > 0)
    request.stop = value.stopSequences;
  return { ...request, ...responseFormat(value) };
}

/**
 * A `generateContent` request (checked by the edge) as an OpenAI chat completion for
 * `model`; a stream asks for its usage chunk, which Gemini's last event reports.
 */
export function geminiToChatRequest(body: Json, model: string, stream: boolean): Json {
  // Content cached at Google is part of the prompt that only Gemini holds.
  if (body.cachedContent !== undefined && body.cachedContent !== null)
    throw invalid(
      '`cachedContent` cannot be sent to this model (it is not served by Gemini); send the content itself.',
      'cachedContent',
    );
  const calls = new CallIds();
  const messages = systemMessage(body.systemInstruction);
  (body.contents as Content[]).forEach((content, index) => {
    const param = `contents[${index}]`;
    const parts = partsOf(content, param);
    if (content.role === 'model') messages.push(modelMessage(parts, param, calls));
    else messages.push(...userMessages(parts, param, calls));
  });
  const request: Json = { model, messages, ...generationConfig(body.generationConfig) };
  const declared = tools(body.tools);
  if (declared && declared.length > 0) {
    request.tools = declared;
    Object.assign(request, toolChoice(body.toolConfig));
  }
  if (stream) {
    request.stream = true;
    request.stream_options = { include_usage: true };
  }
  return request;
}

/** The texts of one embedContent request's content. */
function embeddedText(request: unknown, param: string): string {
  const content = isObject(request) ? request.content : undefined;
  return partsOf(content, param)
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/**
 * `embedContent` (one request) or `batchEmbedContents` (`requests`) as OpenAI's embeddings
 * request: one input each; the first `outputDimensionality` sets `dimensions`.
 */
export function geminiToEmbeddingsRequest(body: Json, model: string, batch: boolean): Json {
  const requests = batch ? (body.requests as unknown[]) : [body];
  const input = requests.map((r, index) =>
    embeddedText(r, batch ? `requests[${index}].content` : 'content'),
  );
  const first = requests[0];
  const dimensions = isObject(first) ? first.outputDimensionality : undefined;
  return {
    model,
    input,
    ...(typeof dimensions === 'number' ? { dimensions } : {}),
  };
}

/**
 * The texts a model reads of a `generateContent` request, for the tokenizer (the edge's
 * count for a model no gemini channel serves, metering's when no usage came back): the
 * system instruction, every part's text, function calls and responses, and the tools.
 */
export function geminiInputText(body: Json): string {
  const texts: string[] = [];
  const read = (content: unknown): void => {
    const parts = isObject(content) && Array.isArray(content.parts) ? content.parts : [];
    for (const part of parts as unknown[]) {
      if (!isObject(part)) continue;
      if (typeof part.text === 'string') texts.push(part.text);
      const call = isObject(part.functionCall) ? part.functionCall : undefined;
      if (call)
        texts.push(
          (typeof call.name === 'string' ? call.name : '') + JSON.stringify(call.args ?? {}),
        );
      const response = isObject(part.functionResponse) ? part.functionResponse : undefined;
      if (response) texts.push(JSON.stringify(response.response ?? {}));
    }
  };
  if (typeof body.systemInstruction === 'string') texts.push(body.systemInstruction);
  else read(body.systemInstruction);
  for (const content of Array.isArray(body.contents) ? (body.contents as unknown[]) : [])
    read(content);
  if (Array.isArray(body.tools) && body.tools.length > 0) texts.push(JSON.stringify(body.tools));
  return texts.join('\n');
}
