import type { EmbeddingsAdapter } from '../adapter.js';
import { invalid } from '../openai-request.js';

// OpenAI embeddings ↔ Gemini `batchEmbedContents`
// (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents). Gemini reports
// no token counts: the edge counts the input with its tokenizer.

function texts(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input;
  throw invalid(
    'This model embeds text: `input` must be a string or an array of strings.',
    'input',
  );
}

function base64Of(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString('base64');
}

export const geminiEmbeddings: EmbeddingsAdapter = {
  request({ body, upstreamModel, secret }) {
    const model = `models/${upstreamModel.replace(/^models\//, '')}`;
    const dimensions = typeof body.dimensions === 'number' ? body.dimensions : undefined;
    const requests = texts(body.input).map((text) => ({
      model,
      content: { parts: [{ text }] },
      ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}),
    }));
    return {
      path: `/v1beta/${model.split('/').map(encodeURIComponent).join('/')}:batchEmbedContents`,
      headers: { 'x-goog-api-key': secret },
      body: Buffer.from(JSON.stringify({ requests })),
    };
  },
  answer(body, { model, base64 }) {
    const { embeddings } = JSON.parse(body.toString('utf8')) as {
      embeddings?: { values?: number[] }[];
    };
    return Buffer.from(
      JSON.stringify({
        object: 'list',
        model,
        data: (embeddings ?? []).map(({ values = [] }, index) => ({
          object: 'embedding',
          index,
          embedding: base64 ? base64Of(values) : values,
        })),
      }),
    );
  },
};
