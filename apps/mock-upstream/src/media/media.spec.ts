import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import OpenAI from 'openai';
import request from 'supertest';
import { inflateSync } from 'node:zlib';
import { MockUpstreamModule } from '../app.module.js';
import { AUDIO_SAMPLE_RATE, AUDIO_SECONDS, IMAGE_SIZE, mediaSeed } from './generated-media.js';

// The mock's generated media as a client and a browser get them: real PNG and WAV files
// behind the links its image and music answers carry.

/** Width, height and the first pixel's colour of an 8-bit RGB PNG, read by its chunks. */
function readPng(file: Buffer): { width: number; height: number; firstPixel: number[] } {
  expect(file.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10]));
  let offset = 8;
  let width = 0;
  let height = 0;
  const data: Buffer[] = [];
  while (offset < file.length) {
    const length = file.readUInt32BE(offset);
    const type = file.toString('latin1', offset + 4, offset + 8);
    const body = file.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      expect([...body.subarray(8, 10)]).toEqual([8, 2]);
    }
    if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  const pixels = inflateSync(Buffer.concat(data));
  expect(pixels.length).toBe(height * (1 + width * 3));
  return { width, height, firstPixel: [...pixels.subarray(1, 4)] };
}

describe('mock-upstream media', () => {
  let app: NestFastifyApplication;
  let origin: string;
  const client = () =>
    new OpenAI({ apiKey: 'sk-mock-media', baseURL: `${origin}/v1`, maxRetries: 0 });

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, { MOCK_ACCOUNTS: 'sk-mock-media' });
    app = await createService(
      {
        name: 'mock-upstream',
        environment: MockUpstreamEnv,
        module: (env) => MockUpstreamModule.forRoot(env),
        port: () => 0,
      },
      env,
      createLogger({ service: 'mock-upstream', level: 'silent' }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    origin = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  it('answers an image generation with links to PNGs it serves, one colour per prompt', async () => {
    const images = await client().images.generate({ model: 'dall-e-3', prompt: 'a cat', n: 2 });
    const urls = (images.data ?? []).map((image) => image.url ?? '');
    expect(urls[0]).toBe(`${origin}/media/images/${mediaSeed('a cat')}.png`);
    expect(new Set(urls).size).toBe(2);

    const served = await request(origin).get(new URL(urls[0]!).pathname).buffer(true).expect(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.headers['access-control-allow-origin']).toBe('*');
    const png = readPng(served.body as Buffer);
    expect([png.width, png.height]).toEqual([IMAGE_SIZE, IMAGE_SIZE]);
    const seed = Buffer.from(mediaSeed('a cat'), 'hex');
    expect(png.firstPixel).toEqual([...seed.subarray(0, 3)]);

    const dog = await client().images.generate({ model: 'dall-e-3', prompt: 'a dog' });
    expect(dog.data?.[0]?.url).not.toBe(urls[0]);
  });

  it('answers b64_json with the same PNG it serves at the link', async () => {
    const inline = await client().images.generate({
      model: 'dall-e-3',
      prompt: 'a lighthouse',
      response_format: 'b64_json',
    });
    const served = await request(origin)
      .get(`/media/images/${mediaSeed('a lighthouse')}.png`)
      .buffer(true)
      .expect(200);
    expect(Buffer.from(inline.data?.[0]?.b64_json ?? '', 'base64')).toEqual(served.body);
  });

  it('answers a music model with a link to a WAV tone it serves', async () => {
    const song = await client().chat.completions.create({
      model: 'suno-v3',
      messages: [{ role: 'user', content: 'a song about rain' }],
    });
    const content = song.choices[0]?.message.content ?? '';
    const url = `${origin}/media/audio/${mediaSeed('a song about rain')}.wav`;
    expect(content).toContain(`(${url})`);

    const served = await request(origin).get(new URL(url).pathname).buffer(true).expect(200);
    expect(served.headers['content-type']).toBe('audio/wav');
    const wav = served.body as Buffer;
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wav.toString('latin1', 8, 12)).toBe('WAVE');
    expect(wav.readUInt32LE(24)).toBe(AUDIO_SAMPLE_RATE);
    expect(wav.readUInt32LE(40)).toBe(AUDIO_SAMPLE_RATE * AUDIO_SECONDS * 2);
    expect(wav.length).toBe(44 + AUDIO_SAMPLE_RATE * AUDIO_SECONDS * 2);
  });

  it('still echoes for chat models', async () => {
    const reply = await client().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'a song about rain' }],
    });
    expect(reply.choices[0]?.message.content).toBe('Echo: a song about rain');
  });

  it.each(['/media/images/cat.png', '/media/images/0123456789abcdef.wav', '/media/audio/x.wav'])(
    'answers %s, which it never made, with a 404',
    async (path) => {
      const response = await request(origin).get(path).expect(404);
      expect(response.body.error.code).toBe('unknown_url');
    },
  );
});
