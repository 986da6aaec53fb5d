import { Worker } from 'node:worker_threads';
import { inputText, messagesToChatRequest } from '@switchyard/providers';
import { type ParsedBody } from '../front-api.js';
import { type CountAnswer, type CountRequest } from './token-count-worker.js';

// POST /v1/messages/count_tokens for a model no anthropic channel serves: the edge answers
// itself (docs/providers.md, "Anthropic's API in front"), counting with the tokenizer
// metering uses for the model's encoding. The request is first converted as /v1/messages
// would send it, so what that route refuses is refused here too. What is counted is what
// metering counts of the same request when no usage comes back (libs/providers'
// input-texts.ts): the system prompt, every block's text, the tool uses and results, and
// the tool definitions.

/**
 * Counts in a worker thread started on the first count (token-count-worker.ts): evaluating
 * an encoding holds its thread for a quarter of a second and keeps tens of megabytes, which
 * neither the edge's event loop nor an edge that never counts should pay (docs/reliability.md,
 * "Counting tokens in bounded time"). A worker that dies fails the counts it had; the next
 * count starts another.
 */
class CountingThread {
  private worker: Worker | null = null;
  private readonly waiting = new Map<
    number,
    { resolve: (tokens: number) => void; reject: (error: Error) => void }
  >();
  private nextId = 0;

  count(model: string, text: string): Promise<number> {
    if (!text) return Promise.resolve(0);
    const worker = (this.worker ??= this.start());
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, model, text } satisfies CountRequest);
    });
  }

  private start(): Worker {
    const worker = new Worker(new URL('./token-count-worker.js', import.meta.url));
    // Idle, it keeps nothing alive: the edge stops without waiting for it.
    worker.unref();
    worker.on('message', (answer: CountAnswer) => {
      const waiter = this.waiting.get(answer.id);
      if (!waiter) return;
      this.waiting.delete(answer.id);
      if ('tokens' in answer) waiter.resolve(answer.tokens);
      else waiter.reject(new Error(`counting tokens failed: ${answer.error}`));
    });
    const gone = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the token counting thread exited (${code})`)));
    return worker;
  }
}

const counting = new CountingThread();

/** Anthropic's count_tokens answer, `{"input_tokens": n}`, for the channel's model. */
export async function localTokenCount(body: ParsedBody, upstreamModel: string): Promise<Buffer> {
  // The budget is the count's to leave out; the conversion wants one.
  messagesToChatRequest({ ...body.json, max_tokens: 1, stream: false });
  const inputTokens = await counting.count(upstreamModel, inputText('messages', body.json));
  return Buffer.from(JSON.stringify({ input_tokens: inputTokens }));
}

/** The tokens of `text` for the channel's model, as metering would count them. */
export function countLocally(upstreamModel: string, text: string): Promise<number> {
  return counting.count(upstreamModel, text);
}
