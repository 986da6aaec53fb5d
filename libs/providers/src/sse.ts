import { createParser, type EventSourceMessage } from 'eventsource-parser';

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

export function dataEvent(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const DONE_EVENT = 'data: [DONE]\n\n';

/** The event an OpenAI SDK raises as an error when a stream breaks. */
export function errorEvent(message: string, code: string): string {
  return dataEvent({ error: { message, type: 'upstream_error', param: null, code } });
}
