import { TokenCounter, inputText, messagesToChatRequest } from '@switchyard/providers';
import { type ParsedBody } from '../front-api.js';

// POST /v1/messages/count_tokens for a model no anthropic channel serves: the edge answers
// itself (docs/providers.md, "Anthropic's API in front"), counting with the tokenizer
// metering uses for the model's encoding. The request is first converted as /v1/messages
// would send it, so what that route refuses is refused here too. What is counted is what
// metering counts of the same request when no usage comes back (libs/providers'
// input-texts.ts): the system prompt, every block's text, the tool uses and results, and
// the tool definitions.

/** The encodings are loaded at start (`loadTokenCounter`) and kept for the process. */
const counter = new TokenCounter();

/** Loads the encodings before the edge serves, so no request waits on their evaluation. */
export function loadTokenCounter(): Promise<void> {
  return counter.load();
}

/** Anthropic's count_tokens answer, `{"input_tokens": n}`, for the channel's model. */
export async function localTokenCount(body: ParsedBody, upstreamModel: string): Promise<Buffer> {
  // The budget is the count's to leave out; the conversion wants one.
  messagesToChatRequest({ ...body.json, max_tokens: 1, stream: false });
  const inputTokens = await counter.count(upstreamModel, inputText('messages', body.json));
  return Buffer.from(JSON.stringify({ input_tokens: inputTokens }));
}

/** The tokens of `text` for the channel's model, as metering would count them. */
export function countLocally(upstreamModel: string, text: string): Promise<number> {
  return counter.count(upstreamModel, text);
}
