import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { type OpenAIUsage } from './openai-usage.js';

/** Decodes an event stream fed in arbitrary byte chunks (a UTF-8 character may be split). */
export class EventStreamDecoder {
  private readonly decoder = new TextDecoder();
  private readonly events: EventSourceMessage[] = [];
  private readonly parser = createParser({ onEvent: (event) => this.events.push(event) });

  /** The events the chunk completes. */
  feed(chunk: Buffer): EventSourceMessage[] {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    return this.events.splice(0);
  }

  /** The JSON payloads of the events the chunk completes; others (keep-alives) are skipped. */
  feedJson<T>(chunk: Buffer): T[] {
    const payloads: T[] = [];
    for (const event of this.feed(chunk)) {
      try {
        payloads.push(JSON.parse(event.data) as T);
      } catch {
        // Not JSON: nothing to translate.
      }
    }
    return payloads;
  }
}

/** What reads an OpenAI chat completion stream, chunk by chunk, into events of its own. */
/** An OpenAI chat stream chunk, as the translators to other APIs' streams read it. */
export interface ChatStreamChunk {
  id?: string;
  model?: string;
  choices?: {
    delta?: {
      content?: string | null;
      refusal?: string | null;
      tool_calls?: {
        index?: number;
        id?: string;
        function?: { name?: string; arguments?: string };
      }[];
    };
    finish_reason?: string | null;
  }[];
  usage?: OpenAIUsage | null;
  error?: { message?: string };
}

export interface ChatChunkReader<T> {
  /** True once the reader wants nothing more (it failed, or it stopped): the rest is dropped. */
  finished(): boolean;
  chunk(chunk: T): string;
  /** The stream's `[DONE]` marker. */
  done(): string;
}

/**
 * Decodes an OpenAI chat completion stream fed in arbitrary byte chunks and hands its chunks
 * to a reader; data that is neither JSON nor `[DONE]` is skipped.
 */
export class ChatChunkDecoder<T> {
  private readonly events = new EventStreamDecoder();

  constructor(private readonly reader: ChatChunkReader<T>) {}

  /** What the reader makes of the chunks these bytes complete, joined. */
  push(bytes: Buffer): string {
    let out = '';
    for (const { data } of this.events.feed(bytes)) {
      if (this.reader.finished()) break;
      if (data === '[DONE]') {
        out += this.reader.done();
        continue;
      }
      let parsed: T;
      try {
        parsed = JSON.parse(data) as T;
      } catch {
        continue;
      }
      out += this.reader.chunk(parsed);
    }
    return out;
  }
}

export function dataEvent(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const DONE_EVENT = 'data: [DONE]\n\n';

/** The event an OpenAI SDK raises as an error when a stream breaks. */
export function errorEvent(message: string, code: string): string {
  return dataEvent({ error: { message, type: 'upstream_error', param: null, code } });
}
