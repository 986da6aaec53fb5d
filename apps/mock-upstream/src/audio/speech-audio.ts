import { createHash } from 'node:crypto';
import { wavFile } from '../media/generated-media.js';

// What the mock "says" for `/v1/audio/speech`: a file of the asked format whose length
// follows the text (about fifteen characters a second, divided by the speed; at most
// MAX_SPEECH_SECONDS). WAV and PCM carry a tone whose pitch comes from the text; FLAC, Ogg
// Opus and MP3 are real files of silence (their frames are simple when they are silent);
// AAC is ADTS frames with correct headers around bytes derived from the text, which a
// decoder may refuse but a client that only forwards or measures the file accepts.

export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export const SPEECH_CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** OpenAI's PCM: 24 kHz, 16-bit signed little-endian, mono. The other formats follow it. */
export const SPEECH_SAMPLE_RATE = 24_000;
const CHARACTERS_A_SECOND = 15;
export const MAX_SPEECH_SECONDS = 30;

export function speechSeconds(input: string, speed: number): number {
  const seconds = [...input].length / CHARACTERS_A_SECOND / speed;
  return Math.min(MAX_SPEECH_SECONDS, Math.max(0.25, seconds));
}

function tonePcm(input: string, seconds: number): Buffer {
  const digest = createHash('sha256').update(input).digest();
  const frequency = 180 + (digest[0] ?? 0);
  const samples = Math.round(SPEECH_SAMPLE_RATE * seconds);
  const pcm = Buffer.alloc(samples * 2);
  const fade = SPEECH_SAMPLE_RATE / 50;
  for (let i = 0; i < samples; i += 1) {
    const envelope = Math.min(1, i / fade, (samples - i) / fade);
    const value = Math.sin((2 * Math.PI * frequency * i) / SPEECH_SAMPLE_RATE) * envelope * 0.3;
    pcm.writeInt16LE(Math.round(value * 32_767), i * 2);
  }
  return pcm;
}

// FLAC (https://xiph.org/flac/format.html): STREAMINFO, then frames of one CONSTANT
// subframe of zeros, each with its CRC-8 header check and CRC-16 frame check.

const FLAC_BLOCK = 4096;

function crc8(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1)
      crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  return crc;
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x8005) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

function silentFlac(seconds: number): Buffer {
  const frames = Math.max(1, Math.ceil((seconds * SPEECH_SAMPLE_RATE) / FLAC_BLOCK));
  const info = Buffer.alloc(38);
  info[0] = 0x80; // last metadata block, STREAMINFO
  info.writeUIntBE(34, 1, 3);
  info.writeUInt16BE(FLAC_BLOCK, 4);
  info.writeUInt16BE(FLAC_BLOCK, 6);
  // Sample rate (20 bits), channels - 1 (3 bits), bits a sample - 1 (5 bits), samples (36 bits).
  const total = BigInt(frames * FLAC_BLOCK);
  const packed =
    (BigInt(SPEECH_SAMPLE_RATE) << 44n) | (0n << 41n) | (15n << 36n) | (total & 0xfffffffffn);
  info.writeBigUInt64BE(packed, 14);
  const parts = [Buffer.from('fLaC', 'latin1'), info];
  for (let n = 0; n < frames; n += 1) {
    // Sync, fixed block size; block size 4096 (0b1100), 24 kHz (0b0110); mono, 16-bit.
    const number = Buffer.from(String.fromCodePoint(n), 'utf8');
    const header = Buffer.concat([Buffer.from([0xff, 0xf8, 0xc6, 0x08]), number]);
    // The subframe: CONSTANT (type 0), no wasted bits, then the 16-bit value 0.
    const frame = Buffer.concat([header, Buffer.from([crc8(header), 0x00, 0x00, 0x00])]);
    const check = Buffer.alloc(2);
    check.writeUInt16BE(crc16(frame));
    parts.push(frame, check);
  }
  return Buffer.concat(parts);
}

// Ogg Opus (RFC 7845): the identification and comment headers, then pages of 20 ms
// packets that hold only their TOC byte, which Opus decodes as silence.

const OGG_CRC = Array.from({ length: 256 }, (_, index) => {
  let crc = index << 24;
  for (let bit = 0; bit < 8; bit += 1)
    crc = crc & 0x80000000 ? ((crc << 1) ^ 0x04c11db7) >>> 0 : (crc << 1) >>> 0;
  return crc >>> 0;
});

function oggPage(
  packets: Buffer[],
  granule: bigint,
  sequence: number,
  flags: number,
  serial: number,
): Buffer {
  const lacing = packets.flatMap((packet) => {
    const values = Array<number>(Math.floor(packet.length / 255)).fill(255);
    return [...values, packet.length % 255];
  });
  const header = Buffer.alloc(27 + lacing.length);
  header.write('OggS', 0, 'latin1');
  header[5] = flags;
  header.writeBigInt64LE(granule, 6);
  header.writeUInt32LE(serial, 14);
  header.writeUInt32LE(sequence, 18);
  header[26] = lacing.length;
  header.set(lacing, 27);
  const page = Buffer.concat([header, ...packets]);
  let crc = 0;
  for (const byte of page) crc = ((crc << 8) ^ OGG_CRC[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  page.writeUInt32LE(crc, 22);
  return page;
}

function silentOpus(seconds: number, seed: Buffer): Buffer {
  const serial = seed.readUInt32BE(0);
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1; // version
  head[9] = 1; // mono
  head.writeUInt16LE(312, 10); // pre-skip
  head.writeUInt32LE(SPEECH_SAMPLE_RATE, 12);
  const vendor = Buffer.from('switchyard-mock', 'latin1');
  const tags = Buffer.alloc(16 + vendor.length);
  tags.write('OpusTags', 0, 'latin1');
  tags.writeUInt32LE(vendor.length, 8);
  vendor.copy(tags, 12);
  const pages = [oggPage([head], 0n, 0, 0x02, serial), oggPage([tags], 0n, 1, 0, serial)];
  // 20 ms CELT fullband packets (TOC 0xf8) of no frame data; granules count 48 kHz samples.
  const packets = Math.max(1, Math.ceil(seconds / 0.02));
  for (let done = 0, sequence = 2; done < packets; sequence += 1) {
    const count = Math.min(50, packets - done);
    done += count;
    const last = done === packets;
    const packetsOfPage = Array.from({ length: count }, () => Buffer.from([0xf8]));
    pages.push(oggPage(packetsOfPage, BigInt(312 + done * 960), sequence, last ? 0x04 : 0, serial));
  }
  return Buffer.concat(pages);
}

/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, mono: 417-byte frames of 1152 samples, silent. */
function silentMp3(seconds: number): Buffer {
  const frames = Math.max(1, Math.ceil((seconds * 44_100) / 1152));
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0xc4]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

/** ADTS frames (AAC-LC, 24 kHz, mono) of 1024 samples each, around bytes of the text's hash. */
function adtsAac(seconds: number, seed: Buffer): Buffer {
  const frames = Math.max(1, Math.ceil((seconds * SPEECH_SAMPLE_RATE) / 1024));
  const payload = Buffer.concat([
    Buffer.from([0x21, 0x00, 0x49, 0x90, 0x02, 0x19, 0x00, 0x23, 0x80]),
    seed.subarray(0, 7),
  ]);
  const length = 7 + payload.length;
  // Sync, MPEG-4, no CRC; LC, 24 kHz (index 6), mono; the frame's length; buffer fullness 0x7ff.
  const header = Buffer.from([
    0xff,
    0xf1,
    (1 << 6) | (6 << 2),
    (1 << 6) | ((length >> 11) & 0x03),
    (length >> 3) & 0xff,
    ((length & 0x07) << 5) | 0x1f,
    0xfc,
  ]);
  const frame = Buffer.concat([header, payload]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

/** The whole file of `format` for `input`, read at `speed`. */
export function speechAudio(input: string, format: SpeechFormat, speed: number): Buffer {
  const seconds = speechSeconds(input, speed);
  const seed = createHash('sha256').update(input).digest();
  switch (format) {
    case 'wav':
      return wavFile(tonePcm(input, seconds), SPEECH_SAMPLE_RATE);
    case 'pcm':
      return tonePcm(input, seconds);
    case 'flac':
      return silentFlac(seconds);
    case 'opus':
      return silentOpus(seconds, seed);
    case 'mp3':
      return silentMp3(seconds);
    case 'aac':
      return adtsAac(seconds, seed);
  }
}
