import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import OpenAI, { toFile } from 'openai';
import request from 'supertest';
import { MockUpstreamModule } from '../app.module.js';
import { speechSeconds } from './speech-audio.js';
import { wavSeconds } from './transcript.js';

// The audio endpoints as the official SDK sees them: speech streamed in each format,
// uploads read as multipart (the SDK writes the form) and answered in each format.

describe('mock-upstream: audio', () => {
  let app: NestFastifyApplication;
  let baseURL: string;
  const http = () => request(app.getHttpServer());
  const client = () => new OpenAI({ apiKey: 'sk-a', baseURL, maxRetries: 0 });

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, { MOCK_ACCOUNTS: 'sk-a' });
    app = await createService(
      {
        name: 'mock-upstream',
        environment: MockUpstreamEnv,
        module: (env) => MockUpstreamModule.forRoot(env),
        port: () => 0,
        bodyLimit: () => 32 * 1024 * 1024,
      },
      env,
      createLogger({ service: 'mock-upstream', level: 'silent' }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseURL = `${await app.getUrl()}/v1`.replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  afterEach(async () => {
    await http().post('/_mock/reset').expect(204);
  });

  const INPUT = 'The quick brown fox jumped over the lazy dog.';

  const speak = async (body: Partial<OpenAI.Audio.SpeechCreateParams> = {}) => {
    const response = await client().audio.speech.create({
      model: 'gpt-4o-mini-tts',
      voice: 'alloy',
      input: INPUT,
      ...body,
    });
    return {
      type: response.headers.get('content-type'),
      chunked: response.headers.get('transfer-encoding'),
      bytes: Buffer.from(await response.arrayBuffer()),
    };
  };

  describe('speech', () => {
    it('streams a WAV whose header gives the length the text takes to say', async () => {
      const wav = await speak({ response_format: 'wav', speed: 1.5 });
      expect(wav.type).toBe('audio/wav');
      expect(wav.chunked).toBe('chunked');
      expect(wav.bytes.toString('latin1', 0, 4)).toBe('RIFF');
      expect(wav.bytes.toString('latin1', 8, 12)).toBe('WAVE');
      expect(wavSeconds(wav.bytes)).toBeCloseTo(speechSeconds(INPUT, 1.5), 3);
      expect((await speak({ response_format: 'wav', speed: 1.5 })).bytes).toEqual(wav.bytes);
    });

    it.each([
      ['mp3', 'audio/mpeg', [0xff, 0xfb]],
      ['opus', 'audio/ogg', [...Buffer.from('OggS')]],
      ['aac', 'audio/aac', [0xff, 0xf1]],
      ['flac', 'audio/flac', [...Buffer.from('fLaC')]],
    ] as const)('answers %s with its content type and signature', async (format, type, magic) => {
      const audio = await speak({ response_format: format });
      expect(audio.type).toBe(type);
      expect([...audio.bytes.subarray(0, magic.length)]).toEqual(magic);
      expect(audio.bytes.length).toBeGreaterThan(100);
    });

    it('answers mp3 by default, and raw 24 kHz 16-bit PCM as pcm', async () => {
      expect((await speak()).type).toBe('audio/mpeg');
      const pcm = await speak({ response_format: 'pcm' });
      expect(pcm.type).toBe('audio/pcm');
      expect(pcm.bytes.length).toBe(Math.round(24_000 * speechSeconds(INPUT, 1)) * 2);
    });

    it('streams the same bytes as server-sent events when asked', async () => {
      const response = await http()
        .post('/v1/audio/speech')
        .set('authorization', 'Bearer sk-a')
        .send({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: INPUT, stream_format: 'sse' })
        .expect(200);
      const events = response.text
        .split('\n\n')
        .filter(Boolean)
        .map(
          (event) => JSON.parse(event.replace(/^data: /, '')) as { type: string; audio?: string },
        );
      expect(events.at(-1)?.type).toBe('speech.audio.done');
      const audio = Buffer.concat(
        events.filter((e) => e.audio).map((e) => Buffer.from(e.audio!, 'base64')),
      );
      expect(audio).toEqual((await speak()).bytes);
    });

    it.each([
      [{ voice: 'alloy', input: 'x' }, "'model'"],
      [{ model: 'm', voice: 'alloy', input: '' }, "'input'"],
      [{ model: 'm', input: 'x' }, "'voice'"],
      [{ model: 'm', voice: 'alloy', input: 'x', response_format: 'ogg' }, "'ogg'"],
      [{ model: 'm', voice: 'alloy', input: 'x', speed: 9 }, "'speed'"],
      [{ model: 'm', voice: 'alloy', input: 'x'.repeat(4097) }, 'maximum length 4096'],
    ])('refuses %j with a 400', async (body, message) => {
      const response = await http()
        .post('/v1/audio/speech')
        .set('authorization', 'Bearer sk-a')
        .send(body)
        .expect(400);
      expect(response.body.error.message).toContain(message);
    });

    it('is cut by the stream faults, and refused by the status ones', async () => {
      const body = { model: 'm', voice: 'alloy', input: 'x'.repeat(2000), response_format: 'wav' };
      const cut = await http()
        .post('/v1/audio/speech')
        .set('authorization', 'Bearer sk-a')
        .set('x-mock-disconnect-after', '1')
        .send(body)
        .then(
          () => 'complete',
          () => 'cut',
        );
      expect(cut).toBe('cut');
      await http().post('/_mock/faults').send({ key: 'sk-a', status: 503, times: 1 }).expect(204);
      await http()
        .post('/v1/audio/speech')
        .set('authorization', 'Bearer sk-a')
        .send(body)
        .expect(503);
    });
  });

  describe('transcriptions and translations', () => {
    let wav: Buffer;
    beforeAll(async () => {
      // 30 seconds of speech, the longest the mock says.
      wav = (await speak({ response_format: 'wav', input: 'x'.repeat(600) })).bytes;
    });

    it('reads the length of a WAV upload from its header: verbose_json with segments', async () => {
      const transcript = await client().audio.transcriptions.create({
        file: await toFile(wav, 'meeting.wav', { type: 'audio/wav' }),
        model: 'whisper-1',
        response_format: 'verbose_json',
        language: 'de',
        timestamp_granularities: ['segment', 'word'],
      });
      expect(transcript).toMatchObject({
        task: 'transcribe',
        language: 'german',
        duration: 30,
        text: 'Part 1 of meeting.wav. Part 2 of meeting.wav. Part 3 of meeting.wav.',
      });
      expect(transcript.segments?.map((s) => [s.id, s.start, s.end])).toEqual([
        [0, 0, 10],
        [1, 10, 20],
        [2, 20, 30],
      ]);
      expect(transcript.words?.[0]).toEqual({ word: 'Part', start: 0, end: 2.5 });
      const log = (await http().get('/_mock/accounts/sk-a/requests')).body as {
        body: Record<string, unknown>;
      }[];
      expect(log.at(-1)?.body).toMatchObject({
        model: 'whisper-1',
        file: { name: 'meeting.wav', size: wav.length },
      });
    });

    it('answers json, text, srt and vtt', async () => {
      const file = async () => toFile(Buffer.alloc(160_000), 'note.mp3', { type: 'audio/mpeg' });
      // 160 kB of compressed audio is ten seconds at 128 kbit/s: one part.
      const json = await client().audio.transcriptions.create({
        file: await file(),
        model: 'whisper-1',
      });
      expect(json.text).toBe('Part 1 of note.mp3.');
      const text = await client().audio.transcriptions.create({
        file: await file(),
        model: 'whisper-1',
        response_format: 'text',
      });
      expect(text).toBe('Part 1 of note.mp3.\n');
      const srt = await client().audio.transcriptions.create({
        file: await file(),
        model: 'whisper-1',
        response_format: 'srt',
      });
      expect(srt).toBe('1\n00:00:00,000 --> 00:00:10,000\nPart 1 of note.mp3.\n\n');
      const vtt = await client().audio.transcriptions.create({
        file: await file(),
        model: 'whisper-1',
        response_format: 'vtt',
      });
      expect(vtt).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:10.000\nPart 1 of note.mp3.\n\n');
    });

    it('translates into English', async () => {
      const translation = await client().audio.translations.create({
        file: await toFile(wav, 'rede.wav'),
        model: 'whisper-1',
        response_format: 'verbose_json',
      });
      expect(translation).toMatchObject({ task: 'translate', language: 'english', duration: 30 });
    });

    it('streams a transcript as events when asked', async () => {
      const response = await http()
        .post('/v1/audio/transcriptions')
        .set('authorization', 'Bearer sk-a')
        .field('model', 'gpt-4o-transcribe')
        .field('stream', 'true')
        .attach('file', wav, 'meeting.wav')
        .expect(200);
      const events = response.text
        .split('\n\n')
        .filter(Boolean)
        .map((event) => JSON.parse(event.replace(/^data: /, '')) as { type: string });
      expect(events.map((e) => e.type)).toEqual([
        'transcript.text.delta',
        'transcript.text.delta',
        'transcript.text.delta',
        'transcript.text.done',
      ]);
    });

    it.each([
      ['no file', (r: request.Test) => r.field('model', 'whisper-1'), "'file'"],
      ['no model', (r: request.Test) => r.attach('file', Buffer.alloc(10), 'a.wav'), "'model'"],
      [
        'a format it does not know',
        (r: request.Test) =>
          r
            .field('model', 'whisper-1')
            .field('response_format', 'xml')
            .attach('file', Buffer.alloc(10), 'a.wav'),
        "'xml'",
      ],
      [
        'a file type it does not take',
        (r: request.Test) =>
          r.field('model', 'whisper-1').attach('file', Buffer.alloc(10), 'a.txt'),
        'Invalid file format',
      ],
      [
        'a temperature out of range',
        (r: request.Test) =>
          r
            .field('model', 'whisper-1')
            .field('temperature', '2')
            .attach('file', Buffer.alloc(10), 'a.wav'),
        "'temperature'",
      ],
    ])('refuses an upload with %s with a 400', async (_, build, message) => {
      const response = await build(
        http().post('/v1/audio/transcriptions').set('authorization', 'Bearer sk-a'),
      ).expect(400);
      expect(response.body.error).toMatchObject({
        type: 'invalid_request_error',
        message: expect.stringContaining(message),
      });
    });

    it('refuses JSON, and a file over 25 MB with a 413', async () => {
      await http()
        .post('/v1/audio/translations')
        .set('authorization', 'Bearer sk-a')
        .send({ model: 'whisper-1' })
        .expect(400);
      const response = await http()
        .post('/v1/audio/transcriptions')
        .set('authorization', 'Bearer sk-a')
        .field('model', 'whisper-1')
        .attach('file', Buffer.alloc(25 * 1024 * 1024 + 1), 'big.mp3')
        .expect(413);
      expect(response.body.error.message).toContain('26214400');
    });

    it('applies the fault headers: a status, and a reply as the transcript', async () => {
      const upload = (header: string, value: string) =>
        http()
          .post('/v1/audio/transcriptions')
          .set('authorization', 'Bearer sk-a')
          .set(header, value)
          .field('model', 'whisper-1')
          .attach('file', wav, 'meeting.wav');
      await upload('x-mock-status', '500').expect(500);
      const told = await upload('x-mock-reply', 'hello world').expect(200);
      expect(told.body.text).toBe('hello world');
    });
  });
});
