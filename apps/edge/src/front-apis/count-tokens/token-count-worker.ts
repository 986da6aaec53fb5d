import { parentPort } from 'node:worker_threads';
import { TokenCounter } from '@switchyard/providers';

// The thread the edge counts tokens in (local-token-count.ts): the encodings are evaluated
// and kept here, on the first count, so the event loop never holds for their evaluation and
// an edge that never counts never loads them (docs/reliability.md, "Counting tokens in
// bounded time").

/** What the edge asks: the tokens of `text` for `model`, answered under `id`. */
export interface CountRequest {
  id: number;
  model: string;
  text: string;
}

export type CountAnswer = { id: number; tokens: number } | { id: number; error: string };

const counter = new TokenCounter();
const port = parentPort!;

port.on('message', ({ id, model, text }: CountRequest) => {
  counter.count(model, text).then(
    (tokens) => port.postMessage({ id, tokens } satisfies CountAnswer),
    (error: unknown) =>
      port.postMessage({
        id,
        error: (error as Error).message ?? String(error),
      } satisfies CountAnswer),
  );
});
