import { type IncomingHttpHeaders } from 'node:http';
import { GatewayError, type GatewayEndpoint } from '@switchyard/contracts';
import { type ForwardedFrontApi, type ParsedBody } from '../front-api.js';
import { familyHealth, openAIFamilyRequest, servedBy } from '../openai-channels.js';
import { OPENAI_SHAPE } from '../openai-shape.js';
import { invalid } from '../request-body.js';
import { AudioReader, relayedBytes, reportedSeconds } from './audio-answer.js';
import { boundaryOf, readMultipart, withField, type Span } from './multipart.js';

// OpenAI's transcriptions and translations (docs/providers.md, "Audio"): a multipart upload
// of up to 25 MB, forwarded as it came (only the model field renamed), and the transcript
// passed back as the upstream wrote it, in the format asked (json, text, srt, verbose_json,
// vtt) and its content type. Served by openai and azure channels; the others are passed
// over. Billed by the audio's seconds: the model's input price is read per million seconds.

/** OpenAI's limit on an audio file. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
/** The route's body limit: the file and room for the form's other fields and boundaries. */
export const AUDIO_BODY_LIMIT = MAX_AUDIO_BYTES + 1024 * 1024;
const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'];
/** Bits a second of compressed speech takes at most, for the audio's length without a report. */
const BILLED_BYTES_PER_SECOND = 16_000; // 128 kbit/s
/** ... and at least, for the spend hold's worst case (Opus speech at 16 kbit/s). */
const HELD_BYTES_PER_SECOND = 2_000;

interface AudioUpload {
  /** Where the model's value lies, to rename it. */
  modelSpan: Span;
  file: Span;
  /** Seconds the audio lasts, as its header says or guessed from its size. */
  seconds: number;
  format: string;
}

/** A WAV file's length, from its header: data bytes over bytes a second. */
function wavSeconds(audio: Buffer): number | null {
  if (audio.length < 44 || audio.toString('latin1', 0, 4) !== 'RIFF') return null;
  if (audio.toString('latin1', 8, 12) !== 'WAVE') return null;
  const byteRate = audio.readUInt32LE(28);
  return byteRate > 0 ? (audio.length - 44) / byteRate : null;
}

function readUpload(
  raw: unknown,
  headers: IncomingHttpHeaders | undefined,
): { parsed: ParsedBody; upload: AudioUpload } {
  const boundary = boundaryOf(headers?.['content-type']);
  if (!boundary) {
    throw invalid(
      "This endpoint expects a multipart/form-data body with the audio as its 'file'.",
      null,
    );
  }
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.alloc(0);
  const form = readMultipart(bytes, boundary);
  const file = form.files.get('file');
  if (!file) throw invalid("Missing required parameter: 'file'.", 'file');
  const model = form.fields.get('model');
  if (!model) throw invalid("Missing required parameter: 'model'.", 'model');
  const size = file.end - file.start;
  if (size > MAX_AUDIO_BYTES) {
    throw new GatewayError(
      'request_too_large',
      `The audio file is ${size} bytes; at most ${MAX_AUDIO_BYTES} (25 MB) is accepted.`,
      'file',
    );
  }
  const format = form.fields.get('response_format') ?? 'json';
  if (!TRANSCRIPT_FORMATS.includes(format)) {
    throw invalid(
      `'response_format' must be one of ${TRANSCRIPT_FORMATS.map((f) => `'${f}'`).join(', ')}.`,
      'response_format',
    );
  }
  const wav = wavSeconds(bytes.subarray(file.start, file.end));
  const seconds = Math.max(1, Math.ceil(wav ?? size / BILLED_BYTES_PER_SECOND));
  const held = Math.max(seconds, Math.ceil(size / HELD_BYTES_PER_SECOND));
  const prompt = form.fields.get('prompt') ?? '';
  return {
    parsed: {
      json: Object.fromEntries(form.fields),
      raw: bytes,
      model,
      stream: form.fields.get('stream') === 'true',
      estimatedTokens: seconds,
      worstCaseOutputTokens: 0,
      worstCaseInputTokens: held,
      promptText: () => prompt,
    },
    upload: { modelSpan: form.spans.get('model')!, file, seconds, format },
  };
}

/** What a transcript of `upload` bills, read from the answer when it says. */
function secondsOf(body: Buffer, format: string, estimate: number): number | null {
  if (format !== 'json' && format !== 'verbose_json') return estimate;
  try {
    return reportedSeconds(JSON.parse(body.toString('utf8'))) ?? estimate;
  } catch {
    // A JSON format that is not JSON is a broken answer.
    return null;
  }
}

/** The uploads read by `parse`, for `call`: the form is read once a request. */
const uploads = new WeakMap<ParsedBody, AudioUpload>();

function transcriptApi(
  name: string,
  endpoint: GatewayEndpoint,
  operation: string,
): ForwardedFrontApi {
  return {
    kind: 'forwarded',
    name,
    endpoint,
    routes: [{ method: 'POST', path: `/v1/${operation}`, bodyLimit: AUDIO_BODY_LIMIT }],
    ...OPENAI_SHAPE,

    parse(raw, line) {
      const { parsed, upload } = readUpload(raw, line?.headers);
      uploads.set(parsed, upload);
      return parsed;
    },

    // A fallback model (docs/routing.md, "Fallbacks across models") is named in the form
    // by each attempt, as a channel's own name for the model is.
    renamed(body, model) {
      const renamed: ParsedBody = { ...body, model };
      uploads.set(renamed, uploads.get(body)!);
      return renamed;
    },

    call(body, target) {
      const provider = servedBy(target.channel, ['openai', 'azure'], 'audio');
      const upload = uploads.get(body)!;
      // The form names the model the caller asked for; a fallback or a channel renames it.
      const bytes =
        target.upstreamModel === body.json.model
          ? body.raw
          : withField(body.raw, upload.modelSpan, target.upstreamModel);
      const contentType = String(target.clientHeaders['content-type']);
      return {
        request: openAIFamilyRequest(provider, target, operation, bytes, contentType),
        healthStatus: familyHealth(provider),
        answer: (status, answer) => {
          if (status >= 400) return answer;
          if (answer.kind === 'stream') {
            const reader = new AudioReader(upload.seconds, 'transcript.text.done', reportedSeconds);
            return relayedBytes(answer, reader);
          }
          const seconds = secondsOf(answer.body, upload.format, upload.seconds);
          // Left whole, a JSON transcript that is none fails over as a broken answer.
          if (seconds === null) return answer;
          return relayedBytes(answer, new AudioReader(seconds, null));
        },
      };
    },
  };
}

export const transcriptions = transcriptApi(
  'transcriptions',
  'audio.transcriptions',
  'audio/transcriptions',
);
export const translations = transcriptApi(
  'translations',
  'audio.translations',
  'audio/translations',
);
