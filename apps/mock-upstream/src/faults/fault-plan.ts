import { Injectable } from '@nestjs/common';

// What can go wrong with a request, and how tests ask for it: per request with `x-mock-*`
// headers (when calling the mock directly), or scripted per account key through the
// control API (when the gateway is in between and does not forward client headers).

export interface Fault {
  /** Answer with this HTTP status and OpenAI's error body for it. */
  status?: number;
  /** Send nothing at all until the client gives up. */
  hang?: boolean;
  /** Wait this long before the first byte. */
  latencyMs?: number;
  /** Wait this long between two streamed chunks. */
  chunkDelayMs?: number;
  /** Destroy the connection after this many content chunks (0: right after the headers). */
  disconnectAfterChunks?: number;
  /** Send no usage, even when asked for it. */
  omitUsage?: boolean;
  /** The assistant's answer, instead of the echo. */
  reply?: string;
  /** The model name to answer with (a dated, resolved name: docs/specification.md, "Endpoints"). */
  resolvedModel?: string;
  /**
   * Answer with exactly these bytes (with `status`, 200 by default) instead of a completion:
   * what a broken provider or a proxy in front of it sends (an HTML error page, JSON cut
   * short, an event stream that stops mid-event). Scripted only: it is no header's value.
   */
  body?: string;
  /** The content type sent with `body`; `application/json` by default. */
  contentType?: string;
}

interface ScriptedFault {
  fault: Fault;
  /** How many more requests it applies to; Infinity until cleared. */
  remaining: number;
}

export interface Defaults {
  latencyMs: number;
  chunkDelayMs: number;
  /** Percentage of requests answered with a 500. */
  errorRate: number;
}

const HEADER_PREFIX = 'x-mock-';

function fromHeaders(headers: Record<string, string | string[] | undefined>): Fault {
  const header = (name: string): string | undefined => {
    const value = headers[HEADER_PREFIX + name];
    return Array.isArray(value) ? value[0] : value;
  };
  const integer = (name: string): number | undefined => {
    const value = header(name);
    return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
  };
  const fault: Fault = {
    status: integer('status'),
    hang: header('hang') === '1' || undefined,
    latencyMs: integer('latency-ms'),
    chunkDelayMs: integer('chunk-delay-ms'),
    disconnectAfterChunks: integer('disconnect-after'),
    omitUsage: header('omit-usage') === '1' || undefined,
    reply: header('reply'),
    resolvedModel: header('resolved-model'),
  };
  return Object.fromEntries(Object.entries(fault).filter(([, v]) => v !== undefined));
}

@Injectable()
export class FaultPlan {
  private readonly scripted = new Map<string, ScriptedFault[]>();

  constructor(private defaults: Defaults) {}

  /** Applies `fault` to the next `times` requests for `key` ('*' for any key). */
  script(key: string, fault: Fault, times = Infinity): void {
    const queue = this.scripted.get(key) ?? [];
    queue.push({ fault, remaining: times });
    this.scripted.set(key, queue);
  }

  setDefaults(defaults: Partial<Defaults>): void {
    this.defaults = { ...this.defaults, ...defaults };
  }

  clear(): void {
    this.scripted.clear();
  }

  private takeScripted(key: string): Fault | undefined {
    for (const candidate of [key, '*']) {
      const queue = this.scripted.get(candidate);
      const next = queue?.[0];
      if (!queue || !next) continue;
      next.remaining -= 1;
      if (next.remaining <= 0) queue.shift();
      return next.fault;
    }
    return undefined;
  }

  /** The fault for one request: its headers, else the script for its key, else the defaults. */
  resolve(
    key: string | undefined,
    headers: Record<string, string | string[] | undefined>,
    random = Math.random,
  ): Fault {
    const scripted = key === undefined ? undefined : this.takeScripted(key);
    const fault: Fault = {
      latencyMs: this.defaults.latencyMs || undefined,
      chunkDelayMs: this.defaults.chunkDelayMs || undefined,
      ...(this.defaults.errorRate > 0 && random() * 100 < this.defaults.errorRate
        ? { status: 500 }
        : {}),
      ...scripted,
      ...fromHeaders(headers),
    };
    return fault;
  }
}
