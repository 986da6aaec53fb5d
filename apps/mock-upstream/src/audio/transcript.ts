import { type UploadedFile } from './upload-form.js';

// What the mock "hears" in an upload: its length from the WAV header, or from its size at
// 128 kbit/s for compressed formats; one sentence for every ten seconds of it, naming the
// file, so a test can predict the transcript. It is the same for transcriptions and
// translations (into English), apart from the task named in verbose_json.

export const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** The extensions OpenAI takes, in the words of its refusal. */
export const AUDIO_EXTENSIONS = [
  'flac',
  'm4a',
  'mp3',
  'mp4',
  'mpeg',
  'mpga',
  'oga',
  'ogg',
  'wav',
  'webm',
];

/** OpenAI's upload limit for audio: 25 MB. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

const COMPRESSED_BYTES_A_SECOND = 128_000 / 8;
const SEGMENT_SECONDS = 10;

const LANGUAGES: Record<string, string> = {
  en: 'english',
  de: 'german',
  fr: 'french',
  es: 'spanish',
  it: 'italian',
  ja: 'japanese',
  nl: 'dutch',
  pt: 'portuguese',
  zh: 'chinese',
};

/** Seconds of sound in a WAV file by its header, or undefined when it is no WAV. */
export function wavSeconds(bytes: Buffer): number | undefined {
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'RIFF') return undefined;
  if (bytes.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let byteRate: number | undefined;
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 16 <= bytes.length) byteRate = bytes.readUInt32LE(at + 16);
    if (id === 'data') {
      if (!byteRate) return undefined;
      // Streamed WAVs leave the size at its maximum: what follows is the data.
      return Math.min(size, bytes.length - at - 8) / byteRate;
    }
    at += 8 + size + (size % 2);
  }
  return undefined;
}

export function audioSeconds(file: UploadedFile): number {
  const seconds = wavSeconds(file.bytes) ?? file.bytes.length / COMPRESSED_BYTES_A_SECOND;
  return Number(Math.max(seconds, 0.1).toFixed(3));
}

export interface Segment {
  start: number;
  end: number;
  text: string;
}

export interface Transcript {
  task: 'transcribe' | 'translate';
  language: string;
  duration: number;
  text: string;
  segments: Segment[];
}

export function transcribe(
  file: UploadedFile,
  task: Transcript['task'],
  language: string | undefined,
  reply: string | undefined,
): Transcript {
  const duration = audioSeconds(file);
  const count = Math.ceil(duration / SEGMENT_SECONDS);
  const segments =
    reply !== undefined
      ? [{ start: 0, end: duration, text: reply }]
      : Array.from({ length: count }, (_, i) => ({
          start: i * SEGMENT_SECONDS,
          end: Math.min((i + 1) * SEGMENT_SECONDS, duration),
          text: `Part ${i + 1} of ${file.name}.`,
        }));
  return {
    task,
    language:
      task === 'translate' ? 'english' : (LANGUAGES[language ?? 'en'] ?? language ?? 'english'),
    duration,
    text: segments.map((s) => s.text).join(' '),
    segments,
  };
}

function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

/** The body and content type of a transcript in one of OpenAI's formats. */
export function transcriptBody(
  transcript: Transcript,
  format: TranscriptFormat,
  words: boolean,
): { body: string | Record<string, unknown>; type: string } {
  const usage = { type: 'duration', seconds: Math.ceil(transcript.duration) };
  switch (format) {
    case 'json':
      return { body: { text: transcript.text, usage }, type: 'application/json' };
    case 'text':
      return { body: `${transcript.text}\n`, type: 'text/plain; charset=utf-8' };
    case 'srt':
      return {
        body: transcript.segments
          .map(
            (s, i) =>
              `${i + 1}\n${timestamp(s.start, ',')} --> ${timestamp(s.end, ',')}\n${s.text}\n\n`,
          )
          .join(''),
        type: 'text/plain; charset=utf-8',
      };
    case 'vtt':
      return {
        body: `WEBVTT\n\n${transcript.segments
          .map((s) => `${timestamp(s.start, '.')} --> ${timestamp(s.end, '.')}\n${s.text}\n\n`)
          .join('')}`,
        type: 'text/vtt; charset=utf-8',
      };
    case 'verbose_json':
      return {
        body: {
          task: transcript.task,
          language: transcript.language,
          duration: transcript.duration,
          text: transcript.text,
          segments: transcript.segments.map((s, id) => ({
            id,
            seek: Math.round(s.start * 100),
            start: s.start,
            end: s.end,
            text: ` ${s.text}`,
            tokens: [],
            temperature: 0,
            avg_logprob: -0.25,
            compression_ratio: 1,
            no_speech_prob: 0.01,
          })),
          ...(words ? { words: wordTimings(transcript.segments) } : {}),
          usage,
        },
        type: 'application/json',
      };
  }
}

/** Each segment's words, sharing its time evenly. */
function wordTimings(segments: Segment[]): { word: string; start: number; end: number }[] {
  return segments.flatMap((segment) => {
    const words = segment.text.split(/\s+/).filter(Boolean);
    const each = (segment.end - segment.start) / Math.max(words.length, 1);
    return words.map((word, i) => ({
      word,
      start: Number((segment.start + i * each).toFixed(3)),
      end: Number((segment.start + (i + 1) * each).toFixed(3)),
    }));
  });
}
