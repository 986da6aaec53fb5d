import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

// The media the mock "generates": real, small files that browsers decode, made from a seed
// (a hash of the prompt) so the same prompt always gives the same file and the mock keeps
// nothing. A file's name is its seed, so serving one is computing it again.

/** 16 hex digits: enough to tell prompts apart, short enough for a file name. */
export const MEDIA_SEED = /^[0-9a-f]{16}$/;

export function mediaSeed(prompt: string): string {
  return createHash('sha256').update(prompt).digest('hex').slice(0, 16);
}

/** Path of the image or sound of `seed`, below the mock's own address. */
export function mediaPath(kind: 'image' | 'audio', seed: string): string {
  return kind === 'image' ? `/media/images/${seed}.png` : `/media/audio/${seed}.wav`;
}

export const IMAGE_SIZE = 256;

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * A square PNG (8-bit RGB) fading from one colour of the seed at the top to another at the
 * bottom. PNG needs only zlib and CRC-32, both in Node, so no image library is needed.
 */
export function gradientPng(seed: string): Buffer {
  const bytes = Buffer.from(seed, 'hex');
  const [r0, g0, b0, r1, g1, b1] = [...bytes];
  const header = Buffer.alloc(13);
  header.writeUInt32BE(IMAGE_SIZE, 0);
  header.writeUInt32BE(IMAGE_SIZE, 4);
  header.set([8, 2, 0, 0, 0], 8); // depth 8, RGB, deflate, no filter method, no interlace
  const rowLength = 1 + IMAGE_SIZE * 3;
  const pixels = Buffer.alloc(rowLength * IMAGE_SIZE);
  for (let y = 0; y < IMAGE_SIZE; y += 1) {
    const t = y / (IMAGE_SIZE - 1);
    const mix = (from = 0, to = 0) => Math.round(from + (to - from) * t);
    const colour = [mix(r0, r1), mix(g0, g1), mix(b0, b1)];
    // Each row starts with its filter type, 0 (none).
    for (let x = 0; x < IMAGE_SIZE; x += 1) pixels.set(colour, y * rowLength + 1 + x * 3);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(pixels)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

export const AUDIO_SAMPLE_RATE = 22_050;
export const AUDIO_SECONDS = 2;

/**
 * A WAV file (PCM, 16-bit mono) of a tone whose pitch comes from the seed, faded in and
 * out so it does not click.
 */
export function toneWav(seed: string): Buffer {
  const frequency = 220 + (Buffer.from(seed, 'hex')[0] ?? 0) * 2;
  const samples = AUDIO_SAMPLE_RATE * AUDIO_SECONDS;
  const data = Buffer.alloc(samples * 2);
  const fade = AUDIO_SAMPLE_RATE / 20;
  for (let i = 0; i < samples; i += 1) {
    const envelope = Math.min(1, i / fade, (samples - i) / fade);
    const value = Math.sin((2 * Math.PI * frequency * i) / AUDIO_SAMPLE_RATE) * envelope * 0.4;
    data.writeInt16LE(Math.round(value * 32_767), i * 2);
  }
  return wavFile(data, AUDIO_SAMPLE_RATE);
}

/** A WAV file around 16-bit mono PCM samples (little-endian, as WAV keeps them). */
export function wavFile(pcm: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16); // size of the format chunk
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28); // bytes a second
  header.writeUInt16LE(2, 32); // bytes a frame
  header.writeUInt16LE(16, 34); // bits a sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}
