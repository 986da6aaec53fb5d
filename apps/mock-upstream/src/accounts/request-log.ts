import { Injectable } from '@nestjs/common';

// What the provider received, so tests can check that the gateway forwarded a request as
// the client sent it (every field, the mapped model, the headers it adds).

const KEEP_PER_KEY = 50;

export interface ReceivedRequest {
  key: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  at: number;
}

@Injectable()
export class RequestLog {
  private readonly byKey = new Map<string, ReceivedRequest[]>();

  add(entry: ReceivedRequest): void {
    const list = this.byKey.get(entry.key) ?? [];
    // An upload is kept as it logs itself (its files' names and sizes): fifty 25 MB files
    // a key would otherwise stay in memory.
    const { body } = entry;
    const loggable =
      typeof body === 'object' &&
      body !== null &&
      'toJSON' in body &&
      typeof body.toJSON === 'function'
        ? { ...entry, body: (body.toJSON as () => unknown)() }
        : entry;
    list.push(loggable);
    if (list.length > KEEP_PER_KEY) list.shift();
    this.byKey.set(entry.key, list);
  }

  of(key: string): ReceivedRequest[] {
    return this.byKey.get(key) ?? [];
  }

  clear(): void {
    this.byKey.clear();
  }
}
