// The texts a model reads of a request, for the tokenizer (token-counter.ts): the edge's
// answer to a token count for models not served by Anthropic, and metering's count for an
// upstream that reported no usage. A provider bills what its model reads, so besides the
// messages' text that is the system prompt or instructions, tool calls and their results,
// and the tool definitions as JSON (docs/providers.md, "Counting tokens").
//
// The bodies are a client's: anything here may be of any type, and what is not of the
// expected shape is read as nothing rather than refused (the edge's checks refuse).

/** The request shapes whose texts are read: the gateway's three chat-like APIs. */
export type InputTextsApi = 'chat.completions' | 'responses' | 'messages';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A value a model reads as JSON (tool definitions, a tool call's input). */
function json(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Definitions of tools, when there are any. */
function pushDefinitions(texts: string[], definitions: unknown): void {
  if (Array.isArray(definitions) && definitions.length > 0) texts.push(JSON.stringify(definitions));
}

/** A string, or a list of parts of which those with a `text` string are read. */
function pushContent(texts: string[], content: unknown): void {
  if (typeof content === 'string') {
    texts.push(content);
    return;
  }
  for (const part of list(content))
    if (isObject(part) && typeof part.text === 'string') texts.push(part.text);
}

function pushCall(texts: string[], name: unknown, args: unknown): void {
  const call = text(name) + json(args);
  if (call) texts.push(call);
}

/** An OpenAI chat completion request: messages (tool results included) and tool calls. */
export function chatInputTexts(body: Json): string[] {
  const texts: string[] = [];
  for (const message of list(body.messages)) {
    if (!isObject(message)) continue;
    pushContent(texts, message.content);
    for (const call of list(message.tool_calls))
      if (isObject(call) && isObject(call.function))
        pushCall(texts, call.function.name, call.function.arguments);
    if (isObject(message.function_call))
      pushCall(texts, message.function_call.name, message.function_call.arguments);
  }
  pushDefinitions(texts, body.tools);
  pushDefinitions(texts, body.functions);
  return texts;
}

/** An OpenAI Responses request: instructions, every input item's text, calls and outputs. */
export function responsesInputTexts(body: Json): string[] {
  const texts: string[] = [];
  if (typeof body.instructions === 'string') texts.push(body.instructions);
  if (typeof body.input === 'string') texts.push(body.input);
  for (const item of list(body.input)) {
    if (!isObject(item)) continue;
    // Messages' `input_text` and `output_text` parts, and a function call's output.
    pushContent(texts, item.content);
    pushContent(texts, item.output);
    if (item.type === 'function_call') pushCall(texts, item.name, item.arguments);
    if (item.type === 'custom_tool_call') pushCall(texts, item.name, item.input);
    if (item.type === 'reasoning') pushContent(texts, item.summary);
  }
  pushDefinitions(texts, body.tools);
  return texts;
}

/** Anthropic's Messages blocks: text, tool uses with their input, and tool results. */
function pushBlocks(texts: string[], content: unknown): void {
  if (typeof content === 'string') {
    texts.push(content);
    return;
  }
  for (const block of list(content)) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'tool_use') pushCall(texts, block.name, block.input);
    else if (block.type === 'tool_result') pushBlocks(texts, block.content);
  }
}

/** An Anthropic Messages request (and a token count's): system prompt, blocks and tools. */
export function messagesInputTexts(body: Json): string[] {
  const texts: string[] = [];
  pushBlocks(texts, body.system);
  for (const message of list(body.messages))
    if (isObject(message)) pushBlocks(texts, message.content);
  pushDefinitions(texts, body.tools);
  return texts;
}

/** The texts a model reads of a request to one of the chat-like APIs, joined as counted. */
export function inputText(api: InputTextsApi, body: Json): string {
  const texts =
    api === 'chat.completions'
      ? chatInputTexts(body)
      : api === 'responses'
        ? responsesInputTexts(body)
        : messagesInputTexts(body);
  return texts.join('\n');
}
