/** An error body in OpenAI's shape, which the OpenAI SDKs read. */
export function openAIErrorBody(message: string, type: string, code: string | null): Buffer {
  return Buffer.from(JSON.stringify({ error: { message, type, param: null, code } }));
}
