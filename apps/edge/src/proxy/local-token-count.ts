import { TokenCounter, messagesToChatRequest } from '@switchyard/providers';
import { type ParsedBody } from './request-body.js';

// POST /v1/messages/count_tokens for a model no anthropic channel serves: the edge answers
// itself (docs/providers.md, "Anthropic's API in front"), counting with the tokenizer
// metering uses for the model's encoding. The request is first converted as /v1/messages
// would send it, so what that route refuses is refused here too, and what is counted is
// what the model would read: the system prompt, every message's text, the tool calls and
// results, and the tool definitions.

/** The encodings are loaded on the first count and kept for the process. */
const counter = new TokenCounter();

interface ChatMessage {
  content?: string | { type?: string; text?: unknown }[] | null;
  tool_calls?: { function?: { name?: string; arguments?: string } }[];
}

/** The texts of an OpenAI chat completion request a model reads as its input. */
function inputTexts(chat: Record<string, unknown>): string[] {
  const texts: string[] = [];
  for (const message of chat.messages as ChatMessage[]) {
    const { content } = message;
    if (typeof content === 'string') texts.push(content);
    else
      for (const part of content ?? [])
        if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    for (const call of message.tool_calls ?? [])
      texts.push(`${call.function?.name ?? ''}${call.function?.arguments ?? ''}`);
  }
  if (Array.isArray(chat.tools)) texts.push(JSON.stringify(chat.tools));
  return texts;
}

/** Anthropic's count_tokens answer, `{"input_tokens": n}`, for the channel's model. */
export async function localTokenCount(body: ParsedBody, upstreamModel: string): Promise<Buffer> {
  // The budget is the count's to leave out; the conversion wants one.
  const chat = messagesToChatRequest({ ...body.json, max_tokens: 1, stream: false });
  const inputTokens = await counter.count(upstreamModel, inputTexts(chat).join('\n'));
  return Buffer.from(JSON.stringify({ input_tokens: inputTokens }));
}
