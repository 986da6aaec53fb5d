import { type ReportedUsage } from '@switchyard/contracts';
import { type StreamTranslator } from '@switchyard/providers';
import { type Answer } from '../../proxy/upstream-answer.js';
import { readAnswer } from '../conversion.js';
import { openAIInterruption } from '../openai-shape.js';

// How an audio answer comes back: as the upstream sent it (audio bytes, text, SRT, VTT,
// JSON or events), byte for byte, with its content type. What it bills is known before it
// arrives or read from its last event (docs/providers.md, "Audio"): speech by the input's
// characters, a transcript by the audio's seconds.

/** The seconds a transcript's event or JSON reports, if it reports them. */
export function reportedSeconds(json: unknown): number | null {
  const answer = json as { duration?: unknown; usage?: { type?: unknown; seconds?: unknown } };
  const usage = answer?.usage;
  if (usage?.type === 'duration' && typeof usage.seconds === 'number' && usage.seconds >= 0)
    return Math.ceil(usage.seconds);
  if (typeof answer?.duration === 'number' && answer.duration >= 0)
    return Math.ceil(answer.duration);
  return null;
}

/**
 * Reads a relayed audio answer for what it bills, without changing a byte of it. An event
 * stream (speech's `stream_format: sse`, a streamed transcript) is complete only with its
 * `done` event; audio bytes are complete when they end.
 */
export class AudioReader implements StreamTranslator {
  failure: string | null = null;
  usage: ReportedUsage;
  private done = false;
  private line = '';
  private readonly decoder = new TextDecoder();

  constructor(
    units: number,
    /** The type of an event stream's last event; null for audio bytes. */
    private readonly doneEvent: string | null,
    /** Reads what the `done` event reports instead of `units` (a transcript's seconds). */
    private readonly reported: (event: unknown) => number | null = () => null,
  ) {
    this.usage = { promptTokens: units, completionTokens: 0 };
  }

  push(chunk: Buffer): string {
    if (this.doneEvent === null || this.done) return '';
    const lines = (this.line + this.decoder.decode(chunk, { stream: true })).split('\n');
    this.line = lines.pop() ?? '';
    for (const line of lines) this.see(line);
    return '';
  }

  end(): string {
    if (this.doneEvent === null || this.done) return '';
    this.see(this.line);
    if (this.done) return '';
    this.failure = `the upstream ended the stream before its ${this.doneEvent} event`;
    return openAIInterruption(this.failure);
  }

  private see(line: string): void {
    // Only the last event is parsed: the deltas before it are the answer's, and large.
    if (!line.startsWith('data:') || !line.includes(this.doneEvent!)) return;
    try {
      const event = JSON.parse(line.slice(5)) as { type?: unknown };
      if (event.type !== this.doneEvent) return;
      this.done = true;
      const reported = this.reported(event);
      if (reported !== null) this.usage = { promptTokens: reported, completionTokens: 0 };
    } catch {
      // Not JSON: not the last event.
    }
  }
}

async function* nothing(): AsyncGenerator<Buffer> {}

/**
 * An answer relayed as bytes, read by `reader`: a stream as it comes; a whole answer (text,
 * SRT, VTT, JSON, or audio an upstream did not label) as one chunk of such a stream, so it
 * keeps its content type and is not taken for a JSON answer, nor required to be one.
 */
export function relayedBytes(answer: Answer, reader: AudioReader): Answer {
  const stream: Extract<Answer, { kind: 'stream' }> =
    answer.kind === 'stream'
      ? answer
      : { kind: 'stream', first: answer.body, rest: nothing(), binary: true };
  return readAnswer(stream, reader);
}
