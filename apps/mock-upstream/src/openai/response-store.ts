import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';

// OpenAI keeps what `POST /v1/responses` answered (unless `store: false`) for its project:
// it can be read back, its input listed, deleted, and a background one cancelled. The mock
// keeps them per account key, so that a follow-up sent with another key is a 404 as it is
// at OpenAI (another project), and a gateway that loses track of which key made a response
// is caught by its tests.

export interface StoredResponse {
  /** The account key that created it: the only one that may read it. */
  key: string;
  /** The Response as last answered. */
  body: Record<string, unknown>;
  /** A background response that has not run yet: the next read completes it. */
  pending: Record<string, unknown> | null;
  /** The input as items with ids, as `input_items` lists them. */
  inputItems: Record<string, unknown>[];
}

/** The request's `input` as the list of items OpenAI echoes (a string is one user message). */
export function inputItemsOf(input: unknown): Record<string, unknown>[] {
  const items: Record<string, unknown>[] =
    typeof input === 'string'
      ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }]
      : Array.isArray(input)
        ? input.filter(
            (item): item is Record<string, unknown> => typeof item === 'object' && item !== null,
          )
        : [];
  return items.map((item) => ({
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    ...item,
  }));
}

@Injectable()
export class ResponseStore {
  private readonly responses = new Map<string, StoredResponse>();

  save(id: string, stored: StoredResponse): void {
    this.responses.set(id, stored);
  }

  /** The response `key` stored under `id`; undefined for any other key, as for none. */
  find(id: string, key: string | undefined): StoredResponse | undefined {
    const stored = this.responses.get(id);
    return stored && stored.key === key ? stored : undefined;
  }

  delete(id: string): void {
    this.responses.delete(id);
  }
}
