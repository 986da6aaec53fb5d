import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { approximateTokens } from '../openai/completion.js';
import { ExchangeService, writeEvents } from '../openai/exchange.js';
import { providerError } from '../openai/openai-error.js';
import {
  SPEECH_CONTENT_TYPES,
  SPEECH_FORMATS,
  speechAudio,
  type SpeechFormat,
} from './speech-audio.js';
import {
  AUDIO_EXTENSIONS,
  MAX_AUDIO_BYTES,
  TRANSCRIPT_FORMATS,
  transcribe,
  transcriptBody,
  type Transcript,
  type TranscriptFormat,
} from './transcript.js';
import { UnreadableForm, UploadForm, type UploadedFile } from './upload-form.js';

// OpenAI's audio endpoints (https://platform.openai.com/docs/api-reference/audio), with the
// mock's accounts and faults: speech streams its file in chunks (so the stream faults cut
// or slow it), transcriptions and translations read a multipart upload.

interface SpeechRequest {
  model: string;
  input: string;
  voice: string;
  response_format?: SpeechFormat;
  speed?: number;
  stream_format?: 'audio' | 'sse';
}

/** OpenAI's limit on the text of one speech request. */
const MAX_SPEECH_INPUT = 4096;
/** The size of the pieces a speech file is streamed in. */
const SPEECH_CHUNK_BYTES = 16 * 1024;

function invalidSpeech(body: Partial<SpeechRequest> | null): string | null {
  if (typeof body?.model !== 'string') return "Missing required parameter: 'model'.";
  if (typeof body.input !== 'string' || body.input === '')
    return "Missing required parameter: 'input'.";
  if (body.input.length > MAX_SPEECH_INPUT)
    return `Invalid 'input': string too long. Expected a string with maximum length ${MAX_SPEECH_INPUT}, but got a string with length ${body.input.length} instead.`;
  if (typeof body.voice !== 'string' || body.voice === '')
    return "Missing required parameter: 'voice'.";
  const format = body.response_format;
  if (format !== undefined && !SPEECH_FORMATS.includes(format))
    return `Invalid value: '${String(format)}'. Supported values are: ${SPEECH_FORMATS.map((f) => `'${f}'`).join(', ')}.`;
  if (
    body.speed !== undefined &&
    (typeof body.speed !== 'number' || body.speed < 0.25 || body.speed > 4)
  )
    return `Invalid 'speed': expected a number between 0.25 and 4, but got ${JSON.stringify(body.speed)} instead.`;
  if (body.stream_format !== undefined && !['audio', 'sse'].includes(body.stream_format))
    return `Invalid value: '${String(body.stream_format)}'. Supported values are: 'audio', 'sse'.`;
  return null;
}

interface TranscriptionAsk {
  file: UploadedFile;
  format: TranscriptFormat;
  language: string | undefined;
  words: boolean;
  stream: boolean;
}

/** The upload's fields, or OpenAI's refusal (a 400, or a 413 for a file over the limit). */
function readAsk(
  body: unknown,
  task: Transcript['task'],
): TranscriptionAsk | { status: number; message: string } {
  if (body instanceof UnreadableForm)
    return { status: 400, message: `Could not parse multipart form: ${body.reason}` };
  if (!(body instanceof UploadForm))
    return { status: 400, message: 'This endpoint expects a multipart/form-data body.' };
  const file = body.files.get('file');
  if (!file) return { status: 400, message: "Missing required parameter: 'file'." };
  if (body.field('model') === undefined || body.field('model') === '')
    return { status: 400, message: "Missing required parameter: 'model'." };
  if (file.bytes.length > MAX_AUDIO_BYTES)
    return {
      status: 413,
      message: `Maximum content size limit (${MAX_AUDIO_BYTES}) exceeded (${file.bytes.length} bytes read)`,
    };
  const extension = file.name.split('.').at(-1)?.toLowerCase() ?? '';
  if (!AUDIO_EXTENSIONS.includes(extension))
    return {
      status: 400,
      message: `Invalid file format. Supported formats: ${JSON.stringify(AUDIO_EXTENSIONS)}`,
    };
  const format = (body.field('response_format') ?? 'json') as TranscriptFormat;
  if (!TRANSCRIPT_FORMATS.includes(format))
    return {
      status: 400,
      message: `Invalid value: '${format}'. Supported values are: ${TRANSCRIPT_FORMATS.map((f) => `'${f}'`).join(', ')}.`,
    };
  const temperature = body.field('temperature');
  if (temperature !== undefined && !(Number(temperature) >= 0 && Number(temperature) <= 1))
    return {
      status: 400,
      message: `Invalid 'temperature': expected a number between 0 and 1, but got '${temperature}' instead.`,
    };
  const stream = body.field('stream') === 'true';
  if (stream && task === 'translate')
    return { status: 400, message: 'Streaming is not supported for translations.' };
  const granularities = body.field('timestamp_granularities[]') ?? '';
  return {
    file,
    format,
    language: body.field('language'),
    words: granularities.split(',').includes('word'),
    stream,
  };
}

@Controller('v1/audio')
export class AudioController {
  constructor(private readonly exchanges: ExchangeService) {}

  @Post('speech')
  @HttpCode(200)
  async speech(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: Partial<SpeechRequest> | null,
  ): Promise<void> {
    const invalid = invalidSpeech(body);
    if (invalid) {
      await reply.status(400).send(providerError(400, { message: invalid }));
      return;
    }
    const speech = body as SpeechRequest;
    const tokens = approximateTokens(speech.input);
    const exchange = await this.exchanges.open(request, reply, tokens);
    if (!exchange) return;
    const format = speech.response_format ?? 'mp3';
    const audio = speechAudio(speech.input, format, speech.speed ?? 1);
    const chunks: Buffer[] = [];
    for (let at = 0; at < audio.length; at += SPEECH_CHUNK_BYTES)
      chunks.push(audio.subarray(at, at + SPEECH_CHUNK_BYTES));
    const completed =
      speech.stream_format === 'sse'
        ? await writeEvents(exchange, [
            ...chunks.map(
              (chunk) =>
                `data: ${JSON.stringify({ type: 'speech.audio.delta', audio: chunk.toString('base64') })}\n\n`,
            ),
            `data: ${JSON.stringify({
              type: 'speech.audio.done',
              usage: { input_tokens: tokens, output_tokens: 0, total_tokens: tokens },
            })}\n\n`,
          ])
        : await writeEvents(exchange, chunks, SPEECH_CONTENT_TYPES[format]);
    exchange.lease.finish(completed ? 'served' : 'failed', 0);
  }

  @Post('transcriptions')
  @HttpCode(200)
  async transcriptions(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: unknown,
  ): Promise<void> {
    await this.transcript(request, reply, body, 'transcribe');
  }

  @Post('translations')
  @HttpCode(200)
  async translations(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: unknown,
  ): Promise<void> {
    await this.transcript(request, reply, body, 'translate');
  }

  private async transcript(
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    task: Transcript['task'],
  ): Promise<void> {
    const ask = readAsk(body, task);
    if ('status' in ask) {
      await reply
        .status(ask.status)
        .send(providerError(ask.status, { type: 'invalid_request_error', message: ask.message }));
      return;
    }
    const exchange = await this.exchanges.open(request, reply, 0);
    if (!exchange) return;
    const transcript = transcribe(ask.file, task, ask.language, exchange.fault.reply);
    const tokens = approximateTokens(transcript.text);
    if (ask.stream) {
      const events = [
        ...transcript.segments.map(
          (segment, i) =>
            `data: ${JSON.stringify({ type: 'transcript.text.delta', delta: (i > 0 ? ' ' : '') + segment.text })}\n\n`,
        ),
        `data: ${JSON.stringify({
          type: 'transcript.text.done',
          text: transcript.text,
          usage: { type: 'duration', seconds: Math.ceil(transcript.duration) },
        })}\n\n`,
      ];
      const completed = await writeEvents(exchange, events);
      exchange.lease.finish(completed ? 'served' : 'failed', tokens);
      return;
    }
    const { body: answer, type } = transcriptBody(transcript, ask.format, ask.words);
    exchange.lease.finish('served', tokens);
    await reply.header('content-type', type).send(answer);
  }
}
