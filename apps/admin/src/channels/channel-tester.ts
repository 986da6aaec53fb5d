import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AdminEnv } from '@switchyard/config';
import { type ChannelProvider, type ProviderSettings } from '@switchyard/contracts';
import { redactSecrets } from '@switchyard/observability';
import {
  ChannelClient,
  ChannelUnreachable,
  DEFAULT_ANTHROPIC_VERSION,
  awsCredentials,
  chatAdapterFor,
  chatPing,
  readAtMost,
  regionOf,
  signatureHeaders,
} from '@switchyard/providers';
import { type ChannelTestError } from './channels.dto.js';

export interface UpstreamAccount {
  baseUrl: string;
  /** The upstream key, unsealed; used for this one request and never reported. */
  secret: string;
  /** The channel's wire format: the request speaks it, as the edge does (docs/providers.md). */
  provider: ChannelProvider;
  settings: ProviderSettings;
}

export interface ChannelProbe extends UpstreamAccount {
  /** The model name sent upstream. */
  model: string;
}

export type ProbeOutcome =
  | { ok: true; status: number; latencyMs: number; reply: string; answeredModel?: string }
  | { ok: false; status: number | null; latencyMs: number; error: ChannelTestError };

const MAX_BODY_BYTES = 256 * 1024;
const MAX_REPLY_CHARS = 500;
const MAX_MESSAGE_CHARS = 500;

/** Room for a short reply to show the administrator (the router's probes, reading only the status, ask for one). */
const PING_MAX_TOKENS = 8;

/** Sends the smallest useful chat request to a channel, in its provider's format, and reports what came back. */
@Injectable()
export class ChannelTester implements OnApplicationShutdown {
  private readonly client: ChannelClient;

  constructor(private readonly env: AdminEnv) {
    const timeoutMs = env.CHANNEL_TEST_TIMEOUT_MS;
    this.client = new ChannelClient({
      firstByteMs: timeoutMs,
      idleMs: timeoutMs,
      userAgent: 'switchyard-admin',
    });
  }

  onApplicationShutdown(): Promise<void> {
    return this.client.close();
  }

  listModels(target: UpstreamAccount): Promise<UpstreamModelList> {
    return listUpstreamModels(this.client, target, this.env.CHANNEL_TEST_TIMEOUT_MS);
  }

  async probe(target: ChannelProbe): Promise<ProbeOutcome> {
    const timeoutMs = this.env.CHANNEL_TEST_TIMEOUT_MS;
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const clean = (text: string) => scrub(text, target.secret).slice(0, MAX_MESSAGE_CHARS);
    const deadline = AbortSignal.timeout(timeoutMs);
    let status: number | null = null;
    try {
      chatAdapterFor(target.provider);
    } catch {
      return {
        ok: false,
        status,
        latencyMs: 0,
        error: {
          code: 'unsupported_provider',
          message: `The gateway cannot convert requests for ${target.provider} channels yet.`,
        },
      };
    }
    const ping = chatPing(
      { ...target, upstreamModel: target.model },
      target.model,
      PING_MAX_TOKENS,
    );
    try {
      const response = await this.client.send({
        ...ping.call,
        userAgent: 'switchyard-admin/channel-test',
        signal: deadline,
      });
      status = response.statusCode;
      const answer = await readAtMost(response.body, MAX_BODY_BYTES);
      const text = ping.toOpenAI(status, answer).toString('utf8');
      const latencyMs = elapsed();
      const body = parseJson(text);
      if (status >= 200 && status < 300) {
        const reply = replyOf(body);
        if (reply === null) {
          return {
            ok: false,
            status,
            latencyMs,
            error: {
              code: 'invalid_response',
              message: clean(`The upstream answered ${status} without a chat completion: ${text}`),
            },
          };
        }
        const answeredModel = isRecord(body) && typeof body.model === 'string' ? body.model : null;
        return {
          ok: true,
          status,
          latencyMs,
          reply: clean(reply).slice(0, MAX_REPLY_CHARS),
          ...(answeredModel ? { answeredModel: clean(answeredModel) } : {}),
        };
      }
      const upstream = errorOf(body);
      return {
        ok: false,
        status,
        latencyMs,
        error: {
          code: upstream?.code ?? `http_${status}`,
          message: clean(upstream?.message ?? (text || `The upstream answered ${status}`)),
        },
      };
    } catch (error) {
      const latencyMs = elapsed();
      if (deadline.aborted || isTimeout(error)) {
        return {
          ok: false,
          status,
          latencyMs,
          error: { code: 'timeout', message: `No complete answer within ${timeoutMs} ms` },
        };
      }
      return {
        ok: false,
        status,
        latencyMs,
        error: { code: 'connect_error', message: clean(describe(error)) },
      };
    }
  }
}

export interface UpstreamModelList {
  ok: boolean;
  status: number | null;
  latencyMs: number;
  models: string[];
  error?: ChannelTestError;
}

const MAX_MODELS = 2000;

/** How one provider lists its models: where to ask, with what, and how to read the answer. */
interface ModelListing {
  baseUrl: string;
  path: string;
  /** True when `path` is the provider's own route (no OpenAI `/v1` base handling). */
  providerPath?: boolean;
  /** The provider's authentication headers; `Authorization: Bearer` when absent. */
  headers?: Record<string, string>;
  /** Bedrock signs each request (Signature V4); a function of its own, handed on to the client. */
  sign?: (url: URL) => Promise<Record<string, string>>;
  /** The model ids in a successful answer, or null when it is not a model list. */
  ids(body: unknown): string[] | null;
}

/** `data[].id`, as OpenAI's and Anthropic's model lists give them. */
function dataIds(body: unknown): string[] | null {
  if (!isRecord(body) || !Array.isArray(body.data)) return null;
  return body.data.flatMap((entry: unknown) =>
    isRecord(entry) && typeof entry.id === 'string' ? [entry.id] : [],
  );
}

/** Gemini methods a channel can serve: chat and embeddings. */
const GEMINI_METHODS = new Set(['generateContent', 'embedContent']);

/**
 * The model-list request of a provider (docs/providers.md), or a sentence saying why it has
 * none. Azure OpenAI's data-plane API lists no deployments: they come from the channel's
 * model mapping.
 */
function modelListing(target: UpstreamAccount): ModelListing | string {
  switch (target.provider) {
    case 'openai':
      return { baseUrl: target.baseUrl, path: '/models', ids: dataIds };
    case 'anthropic':
      return {
        baseUrl: target.baseUrl,
        path: '/v1/models?limit=1000',
        providerPath: true,
        headers: {
          'x-api-key': target.secret,
          'anthropic-version': target.settings.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION,
        },
        ids: dataIds,
      };
    case 'gemini':
      return {
        baseUrl: target.baseUrl,
        path: '/v1beta/models?pageSize=1000',
        providerPath: true,
        headers: { 'x-goog-api-key': target.secret },
        ids: (body) => {
          if (!isRecord(body) || !Array.isArray(body.models)) return null;
          return body.models.flatMap((entry: unknown) => {
            if (!isRecord(entry) || typeof entry.name !== 'string') return [];
            const methods = Array.isArray(entry.supportedGenerationMethods)
              ? entry.supportedGenerationMethods
              : [];
            return methods.some((m) => GEMINI_METHODS.has(String(m)))
              ? [entry.name.replace(/^models\//, '')]
              : [];
          });
        },
      };
    case 'bedrock': {
      // The model list is on Bedrock's control plane, `bedrock.{region}`, not the runtime.
      const region = regionOf(target.settings.region, target.baseUrl);
      return {
        baseUrl: target.baseUrl.replace('://bedrock-runtime.', '://bedrock.'),
        path: '/foundation-models',
        providerPath: true,
        headers: {},
        sign: (signed) =>
          signatureHeaders({ method: 'GET', url: signed }, awsCredentials(target.secret), region),
        ids: (body) => {
          if (!isRecord(body) || !Array.isArray(body.modelSummaries)) return null;
          return body.modelSummaries.flatMap((entry: unknown) =>
            isRecord(entry) && typeof entry.modelId === 'string' ? [entry.modelId] : [],
          );
        },
      };
    }
    case 'azure':
      return "Azure OpenAI does not list a resource's deployments through its API: name them in the channel's model mapping (model → deployment).";
  }
}

/** Asks an upstream for its models, in its provider's way, so an administrator can pick a channel's models. */
async function listUpstreamModels(
  client: ChannelClient,
  target: UpstreamAccount,
  timeoutMs: number,
): Promise<UpstreamModelList> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const clean = (text: string) => scrub(text, target.secret).slice(0, MAX_MESSAGE_CHARS);
  const listing = modelListing(target);
  if (typeof listing === 'string') {
    return {
      ok: false,
      status: null,
      latencyMs: 0,
      models: [],
      error: { code: 'unsupported_provider', message: listing },
    };
  }
  const deadline = AbortSignal.timeout(timeoutMs);
  let status: number | null = null;
  try {
    const response = await client.send({
      baseUrl: listing.baseUrl,
      path: listing.path,
      ...(listing.providerPath ? { providerPath: true } : {}),
      method: 'GET',
      secret: target.secret,
      ...(listing.headers ? { headers: listing.headers } : {}),
      ...(listing.sign ? { sign: listing.sign } : {}),
      userAgent: 'switchyard-admin/models',
      signal: deadline,
    });
    status = response.statusCode;
    const text = (await readAtMost(response.body, MAX_BODY_BYTES * 8)).toString('utf8');
    const body = parseJson(text);
    const listed = status >= 200 && status < 300 ? listing.ids(body) : null;
    if (listed) {
      const ids = listed.filter((id) => id.length <= 200).map(clean);
      return {
        ok: true,
        status,
        latencyMs: elapsed(),
        models: [...new Set(ids)].sort().slice(0, MAX_MODELS),
      };
    }
    const upstream = errorOf(body);
    return {
      ok: false,
      status,
      latencyMs: elapsed(),
      models: [],
      error: {
        code: upstream?.code ?? (status < 300 ? 'invalid_response' : `http_${status}`),
        message: clean(upstream?.message ?? (text || `The upstream answered ${status}`)),
      },
    };
  } catch (error) {
    const timedOut = deadline.aborted || isTimeout(error);
    return {
      ok: false,
      status,
      latencyMs: elapsed(),
      models: [],
      error: timedOut
        ? { code: 'timeout', message: `No complete answer within ${timeoutMs} ms` }
        : { code: 'connect_error', message: clean(describe(error)) },
    };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function replyOf(body: unknown): string | null {
  if (!isRecord(body) || !Array.isArray(body.choices)) return null;
  const first: unknown = body.choices[0];
  if (!isRecord(first) || !isRecord(first.message)) return null;
  const content = first.message.content;
  return typeof content === 'string' ? content : content === null ? '' : null;
}

function errorOf(body: unknown): { code?: string; message?: string } | null {
  if (!isRecord(body)) return null;
  const error = isRecord(body.error) ? body.error : body;
  const code = [error.code, error.type].find((v): v is string => typeof v === 'string' && v !== '');
  const message = typeof error.message === 'string' ? error.message : undefined;
  return code === undefined && message === undefined
    ? null
    : { ...(code ? { code } : {}), ...(message ? { message } : {}) };
}

/** No answer in time: before the headers (the client's own error), or while reading the body. */
function isTimeout(error: unknown): boolean {
  if (error instanceof ChannelUnreachable) return error.kind === 'timeout';
  const code =
    typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : '';
  return (
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  );
}

/** What undici said (behind the client's summary), with its cause: `connect ECONNREFUSED …`. */
function describe(failure: unknown): string {
  const error = failure instanceof ChannelUnreachable ? failure.cause : failure;
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

/**
 * Upstreams sometimes quote the key back in their errors: never pass it on, nor any part
 * of a composite key (docs/architecture.md, "Secrets in error text").
 */
function scrub(text: string, secret: string): string {
  return redactSecrets(text, [secret]);
}
