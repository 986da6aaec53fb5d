import { GatewayError, type RoutedChannel } from '@switchyard/contracts';
import { type IncomingHttpHeaders } from 'node:http';
import { type ChannelCall, type ChannelTarget, type RequestLine } from '../front-api.js';
import { AudioReader, reportedSeconds } from './audio-answer.js';
import { boundaryOf, readMultipart, withField } from './multipart.js';
import { speech } from './speech.api.js';
import { MAX_AUDIO_BYTES, transcriptions } from './transcriptions.api.js';

/** The request line of an upload to the transcriptions route, with these headers. */
function lineWith(headers: IncomingHttpHeaders): RequestLine {
  return { url: '/v1/audio/transcriptions', params: {}, query: {}, headers };
}

// Reading audio requests: the multipart scanner against forms as Node's own FormData
// writes them, the checks of each route, and what an answer bills.

async function formBytes(form: FormData): Promise<{ body: Buffer; type: string }> {
  const request = new Request('http://x/', { method: 'POST', body: form });
  return {
    body: Buffer.from(await request.arrayBuffer()),
    type: request.headers.get('content-type')!,
  };
}

function upload(fields: Record<string, string>, file?: { bytes: Buffer; name: string }) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.set('file', new Blob([file.bytes], { type: 'audio/wav' }), file.name);
  return formBytes(form);
}

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

function target(provider: RoutedChannel['provider'], upstreamModel: string, type: string) {
  return {
    channel: { provider } as RoutedChannel,
    upstreamModel,
    secret: 'sk-upstream',
    settings: {},
    clientHeaders: { 'content-type': type },
  } satisfies ChannelTarget;
}

describe('multipart uploads', () => {
  it('finds fields and the file as a range of the body, repeated fields joined', async () => {
    const audio = Buffer.from('RIFF\r\n--not-a-boundary\r\n\r\nbytes');
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('timestamp_granularities[]', 'word');
    form.append('timestamp_granularities[]', 'segment');
    form.set('file', new Blob([audio]), 'naïve "name".wav');
    const { body, type } = await formBytes(form);
    const read = readMultipart(body, boundaryOf(type)!);
    expect(read.fields.get('model')).toBe('whisper-1');
    expect(read.fields.get('timestamp_granularities[]')).toBe('word,segment');
    const file = read.files.get('file')!;
    expect(body.subarray(file.start, file.end)).toEqual(audio);
    expect(file.filename).toBe('naïve %22name%22.wav');
    const renamed = withField(body, read.spans.get('model')!, 'whisper-large');
    expect(readMultipart(renamed, boundaryOf(type)!).fields.get('model')).toBe('whisper-large');
  });

  it.each([
    ['application/json', null],
    ['multipart/form-data', null],
    ['multipart/form-data; boundary=abc', 'abc'],
    ['multipart/form-data; boundary="a b"', 'a b'],
  ])('reads the boundary of %s', (type, boundary) => {
    expect(boundaryOf(type)).toBe(boundary);
  });

  it.each([
    ['', 'no part'],
    ['--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue', 'closing boundary'],
    ['--b\r\nContent-Disposition: form-data\r\n\r\nv\r\n--b--', 'no name'],
    ['--bXX', 'malformed'],
  ])('refuses a broken form (%j) with a 400', (body, reason) => {
    const error = refusal(() => readMultipart(Buffer.from(body), 'b'));
    expect(error.status).toBe(400);
    expect(error.message).toContain(reason);
  });
});

describe('transcriptions', () => {
  it('reads model, seconds from a WAV header, and the hold from the size', async () => {
    const wav = Buffer.alloc(44 + 32_000 * 3);
    wav.write('RIFF', 0, 'latin1');
    wav.write('WAVE', 8, 'latin1');
    wav.writeUInt32LE(32_000, 28);
    const { body, type } = await upload(
      { model: 'whisper-1', stream: 'true' },
      { bytes: wav, name: 'a.wav' },
    );
    const parsed = transcriptions.parse(body, lineWith({ 'content-type': type }));
    expect(parsed).toMatchObject({ model: 'whisper-1', stream: true, estimatedTokens: 3 });
    expect(parsed.worstCaseInputTokens).toBe(Math.ceil(wav.length / 2_000));
  });

  it('refuses what is no upload, or lacks its file or model, or has an unknown format', async () => {
    expect(refusal(() => transcriptions.parse(Buffer.from('{}'), lineWith({}))).status).toBe(400);
    const fileless = await upload({ model: 'm' });
    expect(
      refusal(() =>
        transcriptions.parse(fileless.body, lineWith({ 'content-type': fileless.type })),
      ).param,
    ).toBe('file');
    const modelless = await upload({}, { bytes: Buffer.from('x'), name: 'a.mp3' });
    expect(
      refusal(() =>
        transcriptions.parse(modelless.body, lineWith({ 'content-type': modelless.type })),
      ).param,
    ).toBe('model');
    const format = await upload(
      { model: 'm', response_format: 'xml' },
      { bytes: Buffer.from('x'), name: 'a.mp3' },
    );
    expect(
      refusal(() => transcriptions.parse(format.body, lineWith({ 'content-type': format.type })))
        .param,
    ).toBe('response_format');
  });

  it('refuses a file over 25 MB with a 413', async () => {
    const big = await upload(
      { model: 'm' },
      { bytes: Buffer.alloc(MAX_AUDIO_BYTES + 1), name: 'a.mp3' },
    );
    const error = refusal(() =>
      transcriptions.parse(big.body, lineWith({ 'content-type': big.type })),
    );
    expect(error).toMatchObject({ status: 413, code: 'request_too_large', param: 'file' });
  });

  it('forwards the form as it came to openai, on the deployment to azure, and passes others over', async () => {
    const { body, type } = await upload({ model: 'm' }, { bytes: Buffer.from('x'), name: 'a.mp3' });
    const parsed = transcriptions.parse(body, lineWith({ 'content-type': type }));
    const openai = transcriptions.call(parsed, target('openai', 'm', type)) as ChannelCall;
    expect(openai.request).toMatchObject({ path: '/audio/transcriptions', providerPath: false });
    expect(openai.request.body).toBe(body);
    expect(openai.request.headers).toEqual({
      authorization: 'Bearer sk-upstream',
      'content-type': type,
    });
    const azure = transcriptions.call(parsed, target('azure', 'my-whisper', type)) as ChannelCall;
    expect(azure.request).toMatchObject({
      path: '/openai/deployments/my-whisper/audio/transcriptions?api-version=2024-10-21',
      providerPath: true,
      headers: { 'api-key': 'sk-upstream', 'content-type': type },
    });
    expect(readMultipart(azure.request.body, boundaryOf(type)!).fields.get('model')).toBe(
      'my-whisper',
    );
    expect(refusal(() => transcriptions.call(parsed, target('gemini', 'm', type))).message).toMatch(
      /gemini channel, which does not offer audio/,
    );
  });
});

describe('speech', () => {
  it('counts characters, not UTF-16 units', () => {
    const parsed = speech.parse(
      Buffer.from(JSON.stringify({ model: 'tts-1', voice: 'alloy', input: 'héllo 👋' })),
    );
    expect(parsed.worstCaseInputTokens).toBe(7);
    expect(
      refusal(() => speech.parse(Buffer.from(JSON.stringify({ model: 'tts-1', input: 'x' }))))
        .param,
    ).toBe('voice');
  });
});

describe('what an audio answer bills', () => {
  it('reads the seconds a transcript reports', () => {
    expect(reportedSeconds({ usage: { type: 'duration', seconds: 2.2 } })).toBe(3);
    expect(reportedSeconds({ duration: 4.5 })).toBe(5);
    expect(reportedSeconds({ usage: { type: 'tokens', input_tokens: 9 } })).toBeNull();
  });

  it('takes the last event of a stream, split across chunks, and flags one without it', () => {
    const reader = new AudioReader(10, 'transcript.text.done', reportedSeconds);
    const event = `data: ${JSON.stringify({ type: 'transcript.text.done', usage: { type: 'duration', seconds: 7 } })}\n\n`;
    reader.push(Buffer.from('data: {"type":"transcript.text.delta","delta":"hi"}\n\n'));
    reader.push(Buffer.from(event.slice(0, 20)));
    reader.push(Buffer.from(event.slice(20)));
    expect(reader.end()).toBe('');
    expect(reader.usage).toEqual({ promptTokens: 7, completionTokens: 0 });

    const cut = new AudioReader(10, 'speech.audio.done');
    cut.push(Buffer.from('data: {"type":"speech.audio.delta","audio":"AAAA"}\n\n'));
    expect(cut.end()).toContain('stream_interrupted');
    expect(cut.failure).toMatch(/speech.audio.done/);
    expect(cut.usage.promptTokens).toBe(10);
  });
});
