import { query } from '@switchyard/testing';
import OpenAI, { toFile } from 'openai';
import {
  lastSent,
  providerChannel,
  usageRow,
  useProviderGateway,
  type ProviderChannel,
} from '../support/provider-gateway.js';
import { silentWav } from '../support/audio.js';

// OpenAI's audio endpoints in front of the gateway (docs/providers.md, "Audio"), with the
// openai SDK: speech streamed back as the upstream sends it, billed by the input's
// characters; transcriptions and translations uploaded as multipart forms of up to 25 MB,
// their transcript passed back in the format asked, billed by the audio's seconds. The test
// models cost 1 USD per million units in: a character or a second costs one micro-dollar.

describe('gateway: audio (/v1/audio/*)', () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;
  let tts: ProviderChannel;
  let whisper: ProviderChannel;

  const post = (path: string, body: string | FormData, headers: Record<string, string> = {}) =>
    fetch(`${stack.edge.url}/v1/audio/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.token.key}`, ...headers },
      body,
    });

  beforeAll(async () => {
    tts = await providerChannel(gateway, {
      prefix: 'tts',
      provider: 'openai',
      upstreamModel: 'tts-1',
    });
    whisper = await providerChannel(gateway, {
      prefix: 'whisper',
      provider: 'openai',
      upstreamModel: 'whisper-1',
    });
  });

  describe('speech', () => {
    it('answers the audio file with its content type, billed by characters', async () => {
      const input = 'Hello there, gateway';
      const { data, response } = await gateway.openai.audio.speech
        .create({ model: tts.model, voice: 'alloy', input, response_format: 'wav' })
        .withResponse();
      expect(data.headers.get('content-type')).toBe('audio/wav');
      const audio = Buffer.from(await data.arrayBuffer());
      expect(audio.toString('latin1', 0, 4)).toBe('RIFF');
      expect(audio.toString('latin1', 8, 12)).toBe('WAVE');
      expect((await lastSent(stack, tts.account)).body).toMatchObject({
        model: 'tts-1',
        input,
        voice: 'alloy',
      });
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        endpoint: 'audio.speech',
        promptTokens: input.length,
        completionTokens: 0,
        tokensCounted: false,
        cost: String(input.length),
        status: 200,
        stream: false,
        channelId: tts.channelId,
      });
    });

    it('relays the first chunks while the upstream is still sending the rest', async () => {
      const slow = await providerChannel(gateway, {
        prefix: 'tts-slow',
        provider: 'openai',
        upstreamModel: 'tts-1',
      });
      await stack.mockFault({ key: slow.account, chunkDelayMs: 200, times: 1 });
      const response = await post(
        'speech',
        JSON.stringify({ model: slow.model, voice: 'alloy', input: 'x'.repeat(200) }),
        { 'content-type': 'application/json' },
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('audio/mpeg');
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(first.value!.length).toBeGreaterThan(0);
      // The mock counts a request served once its last chunk is out.
      expect((await stack.mockStats(slow.account)).served).toBe(0);
      let total = first.value!.length;
      for (let next = await reader.read(); !next.done; next = await reader.read())
        total += next.value.length;
      expect(total).toBeGreaterThan(16 * 1024);
    });

    it('cuts the download when the upstream breaks off, and meters it as interrupted', async () => {
      const broken = await providerChannel(gateway, {
        prefix: 'tts-broken',
        provider: 'openai',
        upstreamModel: 'tts-1',
      });
      await stack.mockFault({ key: broken.account, disconnectAfterChunks: 1, times: 1 });
      const response = await post(
        'speech',
        JSON.stringify({ model: broken.model, voice: 'alloy', input: 'y'.repeat(400) }),
        { 'content-type': 'application/json' },
      );
      expect(response.status).toBe(200);
      await expect(response.arrayBuffer()).rejects.toThrow();
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        endpoint: 'audio.speech',
        status: 200,
      });
      const [row] = await query<{ errorCode: string }>(
        stack.databaseUrl,
        `SELECT "errorCode" FROM "UsageLog" WHERE "requestId" = $1`,
        [response.headers.get('x-request-id')],
      );
      expect(row!.errorCode).toBe('stream_interrupted');
    });

    it('relays the speech events of stream_format sse, metered as a stream', async () => {
      const response = await post(
        'speech',
        JSON.stringify({ model: tts.model, voice: 'alloy', input: 'stream', stream_format: 'sse' }),
        { 'content-type': 'application/json' },
      );
      expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
      const text = await response.text();
      expect(text).toContain('"type":"speech.audio.delta"');
      expect(text).toContain('"type":"speech.audio.done"');
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        endpoint: 'audio.speech',
        promptTokens: 6,
        stream: true,
        status: 200,
      });
    });

    it("refuses a request without a voice in OpenAI's error shape", async () => {
      const error = await gateway.openai.audio.speech
        .create({ model: tts.model, input: 'hi' } as OpenAI.Audio.SpeechCreateParams)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
        type: 'invalid_request_error',
        param: 'voice',
      });
    });
  });

  describe('transcriptions and translations', () => {
    it('uploads the file, renames the model in the form, billed by the seconds reported', async () => {
      const { data, response } = await gateway.openai.audio.transcriptions
        .create({
          model: whisper.model,
          file: await toFile(silentWav(3), 'meeting.wav', { type: 'audio/wav' }),
          response_format: 'verbose_json',
        })
        .withResponse();
      expect(data.text).toContain('meeting.wav');
      expect(data.duration).toBeCloseTo(3);
      const sent = await lastSent(stack, whisper.account);
      expect(sent.path).toBe('/v1/audio/transcriptions');
      expect(sent.body).toMatchObject({
        model: 'whisper-1',
        response_format: 'verbose_json',
        file: { name: 'meeting.wav', type: 'audio/wav', size: silentWav(3).length },
      });
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        endpoint: 'audio.transcriptions',
        promptTokens: 3,
        completionTokens: 0,
        cost: '3',
        status: 200,
        stream: false,
        channelId: whisper.channelId,
      });
    });

    it.each([
      ['text', /^text\/plain/, /^Part 1 of clip\.wav\.\n$/],
      ['srt', /^text\/plain/, /^1\n00:00:00,000 --> /],
      ['vtt', /^text\/vtt/, /^WEBVTT\n/],
    ])('passes the %s transcript back as it is', async (format, type, body) => {
      const form = new FormData();
      form.set('model', whisper.model);
      form.set('response_format', format);
      form.set('file', new Blob([silentWav(2)], { type: 'audio/wav' }), 'clip.wav');
      const response = await post('transcriptions', form);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(type);
      expect(await response.text()).toMatch(body);
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        endpoint: 'audio.transcriptions',
        promptTokens: 2,
        status: 200,
      });
    });

    it('translates, with the SDK', async () => {
      const { data, response } = await gateway.openai.audio.translations
        .create({ model: whisper.model, file: await toFile(silentWav(1), 'hallo.wav') })
        .withResponse();
      expect(data.text).toContain('hallo.wav');
      expect((await lastSent(stack, whisper.account)).path).toBe('/v1/audio/translations');
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        endpoint: 'audio.translations',
        promptTokens: 1,
        status: 200,
      });
    });

    it('streams a transcript as events, billed by the seconds its last event reports', async () => {
      const form = new FormData();
      form.set('model', whisper.model);
      form.set('stream', 'true');
      form.set('file', new Blob([silentWav(12)], { type: 'audio/wav' }), 'long.wav');
      const response = await post('transcriptions', form);
      expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
      const text = await response.text();
      expect(text).toContain('"type":"transcript.text.delta"');
      expect(text).toContain('"type":"transcript.text.done"');
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        endpoint: 'audio.transcriptions',
        promptTokens: 12,
        stream: true,
      });
    });

    it("refuses a body that is not a multipart upload, or one without a file, in OpenAI's shape", async () => {
      const json = await post('transcriptions', JSON.stringify({ model: whisper.model }), {
        'content-type': 'application/json',
      });
      expect(json.status).toBe(400);
      expect(await json.json()).toMatchObject({
        error: { type: 'invalid_request_error', code: 'invalid_request' },
      });
      const form = new FormData();
      form.set('model', whisper.model);
      const fileless = await post('transcriptions', form);
      expect(fileless.status).toBe(400);
      expect(await fileless.json()).toMatchObject({
        error: { type: 'invalid_request_error', param: 'file' },
      });
      const error = await gateway.openai.audio.transcriptions
        .create({ model: '', file: await toFile(silentWav(1), 'a.wav') })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
        param: 'model',
      });
    });

    it('refuses a file over 25 MB with a 413, however the body is sized', async () => {
      const form = new FormData();
      form.set('model', whisper.model);
      form.set('file', new Blob([Buffer.alloc(25 * 1024 * 1024 + 1)]), 'big.mp3');
      const over = await post('transcriptions', form);
      expect(over.status).toBe(413);
      expect(await over.json()).toMatchObject({
        error: { code: 'request_too_large', param: 'file' },
      });
      const huge = new FormData();
      huge.set('model', whisper.model);
      huge.set('file', new Blob([Buffer.alloc(27 * 1024 * 1024)]), 'huge.mp3');
      const refused = await post('transcriptions', huge);
      expect(refused.status).toBe(413);
      expect(await refused.json()).toMatchObject({ error: { code: 'request_too_large' } });
      // The upstream saw neither.
      expect(
        (await stack.mockRequests(whisper.account)).filter((r) =>
          JSON.stringify(r.body).includes('big.mp3'),
        ),
      ).toEqual([]);
    });

    it('refuses a model only a provider without audio serves', async () => {
      const claude = await providerChannel(gateway, {
        prefix: 'audio-claude',
        provider: 'anthropic',
        upstreamModel: 'claude-sonnet-4-5-20250929',
      });
      const error = await gateway.openai.audio.transcriptions
        .create({ model: claude.model, file: await toFile(silentWav(1), 'a.wav') })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as Error).message).toMatch(/anthropic channel, which does not offer audio/);
      expect(await stack.mockRequests(claude.account)).toEqual([]);
    });
  });
});
