import { randomBytes } from 'node:crypto';
import { approximateTokens, pieces } from '../openai/completion.js';
import { schemaArguments, schemaValue } from '../structured/schema-value.js';

// How the mock answers `generateContent` (https://ai.google.dev/api/generate-content): it
// echoes the last user text, or the last function response; it calls the first declared
// function (or the one `allowedFunctionNames` names), with arguments valid against its
// schema, unless the turn answers a call. With `responseMimeType: application/json` its
// text is JSON: valid against `responseJsonSchema` or `responseSchema` when one is given,
// else the echo inside an object. The
// system instruction counts as cached content, so usage shows cached tokens whenever one
// is sent. Every function call is signed, and Gemini 3 models refuse calls sent back
// unsigned, as Google documents (https://ai.google.dev/gemini-api/docs/thought-signatures).

export interface Part {
  text?: string;
  inlineData?: { mimeType?: string; data?: string };
  fileData?: { mimeType?: string; fileUri?: string };
  functionCall?: { name?: string; args?: Record<string, unknown> };
  functionResponse?: { name?: string; response?: Record<string, unknown> };
  thoughtSignature?: string;
  thought?: boolean;
}

interface Content {
  role?: string;
  parts?: Part[];
}

interface FunctionDeclaration {
  name: string;
  parameters?: unknown;
  parametersJsonSchema?: unknown;
}

export interface GenerateContentRequest {
  contents: Content[];
  systemInstruction?: Content;
  tools?: { functionDeclarations?: FunctionDeclaration[] }[];
  toolConfig?: { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } };
  generationConfig?: {
    responseMimeType?: string;
    /** Google's OpenAPI-style schema (upper-case types, `nullable`). */
    responseSchema?: unknown;
    /** A JSON Schema proper. */
    responseJsonSchema?: unknown;
  };
}

const REQUEST_FIELDS = new Set([
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'generationConfig',
  'safetySettings',
  'cachedContent',
]);

const GENERATION_FIELDS = new Set([
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseModalities',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'thinkingConfig',
]);

function unknownName(name: string, at?: string): string {
  return `Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ''}: Cannot find field.`;
}

/** What Gemini would refuse with a 400 INVALID_ARGUMENT, or null when the request is well formed. */
export function invalidGenerateContent(body: unknown, model: string): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'Invalid JSON payload received.';
  for (const name of Object.keys(body)) if (!REQUEST_FIELDS.has(name)) return unknownName(name);
  const request = body as Partial<GenerateContentRequest>;
  for (const name of Object.keys(request.generationConfig ?? {}))
    if (!GENERATION_FIELDS.has(name)) return unknownName(name, 'generation_config');
  const config = request.generationConfig;
  if (config?.responseSchema !== undefined && config.responseJsonSchema !== undefined)
    return 'responseSchema and responseJsonSchema cannot both be set.';
  if (
    (config?.responseSchema !== undefined || config?.responseJsonSchema !== undefined) &&
    config.responseMimeType !== 'application/json' &&
    config.responseMimeType !== 'text/x.enum'
  )
    return `* GenerationConfig.response_mime_type: must be application/json when response_schema is set, got: ${config.responseMimeType ?? 'text/plain'}`;
  if (!Array.isArray(request.contents) || request.contents.length === 0)
    return '* GenerateContentRequest.contents: contents is not specified';
  let calls = 0;
  for (const [index, content] of request.contents.entries()) {
    if (content.role !== undefined && content.role !== 'user' && content.role !== 'model')
      return 'Please use a valid role: user, model.';
    const parts = content.parts ?? [];
    if (parts.length === 0)
      return `* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.`;
    const responses = parts.filter((part) => part.functionResponse).length;
    if (responses > 0 && responses !== calls)
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
    const called = parts.filter((part) => part.functionCall);
    if (
      /gemini-3/.test(model) &&
      content.role === 'model' &&
      called.length > 0 &&
      !called[0]!.thoughtSignature
    )
      return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${called[0]!.functionCall!.name}\` , position ${index + 1}.`;
    calls = called.length;
    for (const part of parts) {
      if (part.inlineData && (!part.inlineData.mimeType || !part.inlineData.data))
        return `* GenerateContentRequest.contents[${index}].parts: inline_data needs mime_type and data`;
    }
  }
  return null;
}

function textOf(parts: Part[] | undefined): string {
  return (parts ?? []).map((part) => part.text ?? '').join('');
}

export function promptTokensOf(request: GenerateContentRequest): {
  prompt: number;
  cached: number;
} {
  const cached = approximateTokens(textOf(request.systemInstruction?.parts));
  const said = approximateTokens(request.contents.map((c) => textOf(c.parts)).join('\n'));
  return { prompt: said + cached, cached };
}

export type GeminiAnswer =
  | { kind: 'text'; text: string }
  | { kind: 'call'; name: string; args: Record<string, unknown>; signature: string };

export function answerContent(request: GenerateContentRequest, reply?: string): GeminiAnswer {
  const parts = request.contents.at(-1)?.parts ?? [];
  const response = parts.find((part) => part.functionResponse)?.functionResponse?.response;
  const config = request.generationConfig;
  const asJson = config?.responseMimeType === 'application/json';
  // `text/x.enum` answers one of a schema's enum values, as bare text.
  const asEnum = config?.responseMimeType === 'text/x.enum';
  const schema =
    asJson || asEnum ? (config?.responseJsonSchema ?? config?.responseSchema) : undefined;
  const text = (said: string): GeminiAnswer => ({
    kind: 'text',
    text: asJson ? JSON.stringify({ echo: said }) : said,
  });
  if (response) {
    const output = response.output ?? response;
    return text(reply ?? `Echo: ${typeof output === 'string' ? output : JSON.stringify(output)}`);
  }
  const declarations = (request.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
  const calling = request.toolConfig?.functionCallingConfig;
  if (declarations.length > 0 && calling?.mode !== 'NONE') {
    const allowed = calling?.allowedFunctionNames?.[0];
    const declaration = declarations.find((d) => d.name === allowed) ?? declarations[0]!;
    return {
      kind: 'call',
      name: declaration.name,
      args: schemaArguments(declaration.parametersJsonSchema ?? declaration.parameters),
      signature: Buffer.from(`mock-signature:${declaration.name}`).toString('base64'),
    };
  }
  if (schema !== undefined && reply === undefined) {
    const value = schemaValue(schema);
    return { kind: 'text', text: asEnum ? String(value) : JSON.stringify(value) };
  }
  return text(reply ?? `Echo: ${textOf(parts)}`);
}

export function candidatesTokensOf(answer: GeminiAnswer): number {
  return answer.kind === 'text'
    ? approximateTokens(answer.text)
    : approximateTokens(answer.name + JSON.stringify(answer.args));
}

export interface UsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  totalTokenCount: number;
  cachedContentTokenCount?: number;
}

export function usageMetadata(
  prompt: { prompt: number; cached: number },
  candidates?: number,
): UsageMetadata {
  return {
    promptTokenCount: prompt.prompt,
    ...(candidates !== undefined ? { candidatesTokenCount: candidates } : {}),
    totalTokenCount: prompt.prompt + (candidates ?? 0),
    ...(prompt.cached > 0 ? { cachedContentTokenCount: prompt.cached } : {}),
  };
}

export function responseId(): string {
  return randomBytes(12).toString('base64url');
}

function response(
  parts: Part[],
  finishReason: string | undefined,
  usage: UsageMetadata,
  model: string,
  id: string,
): unknown {
  return {
    candidates: [
      { content: { parts, role: 'model' }, ...(finishReason ? { finishReason } : {}), index: 0 },
    ],
    usageMetadata: usage,
    modelVersion: model,
    responseId: id,
  };
}

function answerParts(answer: GeminiAnswer): Part[] {
  return answer.kind === 'text'
    ? [{ text: answer.text }]
    : [
        {
          functionCall: { name: answer.name, args: answer.args },
          thoughtSignature: answer.signature,
        },
      ];
}

export function generateContentBody(
  answer: GeminiAnswer,
  usage: UsageMetadata,
  model: string,
  id: string,
): unknown {
  return response(answerParts(answer), 'STOP', usage, model, id);
}

/**
 * The streamed answers: text in pieces, each with the prompt's count so far; a function
 * call whole; the last one with the finish reason and the whole usage.
 */
export function generateContentStream(
  answer: GeminiAnswer,
  prompt: { prompt: number; cached: number },
  candidates: number,
  model: string,
  id: string,
): unknown[] {
  const final = usageMetadata(prompt, candidates);
  if (answer.kind === 'call') return [response(answerParts(answer), 'STOP', final, model, id)];
  const texts = pieces(answer.text);
  return texts.map((piece, index) =>
    index === texts.length - 1
      ? response([{ text: piece }], 'STOP', final, model, id)
      : response([{ text: piece }], undefined, usageMetadata(prompt), model, id),
  );
}
