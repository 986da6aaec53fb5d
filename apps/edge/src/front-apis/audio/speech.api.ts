import { type ForwardedFrontApi } from '../front-api.js';
import { familyHealth, openAIFamilyRequest, servedBy } from '../openai-channels.js';
import { OPENAI_SHAPE } from '../openai-shape.js';
import { bodyFor, invalid, parseJson, renamedJsonBody, requiredModel } from '../request-body.js';
import { AudioReader, relayedBytes } from './audio-answer.js';

// OpenAI's text to speech (docs/providers.md, "Audio"): JSON in, the audio file streamed
// back as the upstream sends it, in the format and content type it sends. Served by openai
// and azure channels; the others are passed over. Billed by the input's characters: the
// model's input price is read per million characters, OpenAI's own unit for speech.

/** The input's length as OpenAI counts it: characters, not UTF-16 units nor tokens. */
function characters(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

export const speech: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'speech',
  endpoint: 'audio.speech',
  routes: [{ method: 'POST', path: '/v1/audio/speech' }],
  ...OPENAI_SHAPE,
  renamed: renamedJsonBody,
  answersAudio: true,

  parse(raw) {
    const { json, bytes } = parseJson(raw);
    const model = requiredModel(json);
    if (typeof json.input !== 'string' || json.input === '')
      throw invalid("'input' is required and must be a string.", 'input');
    const voice = json.voice as { id?: unknown } | string | undefined;
    if (typeof voice !== 'string' && typeof (voice as { id?: unknown } | null)?.id !== 'string')
      throw invalid("'voice' is required: a voice's name, or an object with its 'id'.", 'voice');
    for (const field of ['response_format', 'stream_format', 'instructions']) {
      if (json[field] !== undefined && typeof json[field] !== 'string')
        throw invalid(`'${field}' must be a string.`, field);
    }
    const input = json.input;
    const units = characters(input);
    return {
      json,
      raw: bytes,
      model,
      stream: json.stream_format === 'sse',
      estimatedTokens: units,
      worstCaseOutputTokens: 0,
      worstCaseInputTokens: units,
      promptText: () => input,
    };
  },

  call(body, target) {
    const provider = servedBy(target.channel, ['openai', 'azure'], 'audio');
    const units = body.worstCaseInputTokens ?? 0;
    return {
      request: openAIFamilyRequest(
        provider,
        target,
        'audio/speech',
        bodyFor(body, target.upstreamModel),
      ),
      healthStatus: familyHealth(provider),
      answer: (status, answer) =>
        status >= 400
          ? answer
          : relayedBytes(answer, new AudioReader(units, body.stream ? 'speech.audio.done' : null)),
    };
  },
};
