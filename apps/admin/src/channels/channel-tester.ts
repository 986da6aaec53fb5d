import { Injectable } from '@nestjs/common';
import { AdminEnv } from '@switchyard/config';
import { type ChannelProvider, type ProviderSettings } from '@switchyard/contracts';
import { redactSecrets } from '@switchyard/observability';
import {
  DEFAULT_ANTHROPIC_VERSION,
  awsCredentials,
  chatAdapterFor,
  regionOf,
  signatureHeaders,
  type ChatAdapter,
} from '@switchyard/providers';
import { request } from 'undici';
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

interface TestRequest {
  url: string;
  headers: Record<string, string>;
  /** A provider that signs each request (Bedrock): the signature for the URL. */
  sign?(url: URL): Promise<Record<string, string>>;
  body: string | Buffer;
  /** The upstream's answer in OpenAI's format (the identity for `openai` channels). */
  toOpenAI(status: number, text: string): string;
}

const PING = { messages: [{ role: 'user', content: 'ping' }], max_tokens: 8 };

/** The ping in the channel's own format, or null when no adapter converts for its provider. */
function testRequest(target: ChannelProbe): TestRequest | null {
  let adapter: ChatAdapter | null;
  try {
    adapter = chatAdapterFor(target.provider);
  } catch {
    return null;
  }
  if (!adapter) {
    return {
      url: `${target.baseUrl}/v1/chat/completions`,
      headers: { authorization: `Bearer ${target.secret}` },
      body: JSON.stringify({ model: target.model, ...PING }),
      toOpenAI: (_status, text) => text,
    };
  }
  const converting = adapter;
  const outbound = converting.chatRequest(
    {
      body: { model: target.model, ...PING },
      upstreamModel: target.model,
      secret: target.secret,
      settings: target.settings,
    },
    false,
  );
  return {
    url: `${target.baseUrl}${outbound.path}`,
    headers: outbound.headers,
    ...(outbound.sign ? { sign: outbound.sign } : {}),
    body: outbound.body,
    toOpenAI(status, text) {
      const answer = Buffer.from(text);
      try {
        return (
          status < 300
            ? converting.chatAnswer(answer, {
                model: target.model,
                includeUsage: false,
                created: 0,
              })
            : converting.error(status, answer)
        ).body.toString('utf8');
      } catch {
        // Not the provider's JSON: reported as the upstream sent it.
        return text;
      }
    },
  };
}

export type ProbeOutcome =
  | { ok: true; status: number; latencyMs: number; reply: string; answeredModel?: string }
  | { ok: false; status: number | null; latencyMs: number; error: ChannelTestError };

const MAX_BODY_BYTES = 256 * 1024;
const MAX_REPLY_CHARS = 500;
const MAX_MESSAGE_CHARS = 500;

/** Sends the smallest useful chat request to a channel, in its provider's format, and reports what came back. */
@Injectable()
export class ChannelTester {
  constructor(private readonly env: AdminEnv) {}

  listModels(target: UpstreamAccount): Promise<UpstreamModelList> {
    return listUpstreamModels(target, this.env.CHANNEL_TEST_TIMEOUT_MS);
  }

  async probe(target: ChannelProbe): Promise<ProbeOutcome> {
    const timeoutMs = this.env.CHANNEL_TEST_TIMEOUT_MS;
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const clean = (text: string) => scrub(text, target.secret).slice(0, MAX_MESSAGE_CHARS);
    const deadline = AbortSignal.timeout(timeoutMs);
    let status: number | null = null;
    const ping = testRequest(target);
    if (!ping) {
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
    try {
      const signature = ping.sign ? await ping.sign(new URL(ping.url)) : {};
      const response = await request(ping.url, {
        method: 'POST',
        headers: {
          ...ping.headers,
          ...signature,
          accept: 'application/json',
          'content-type': 'application/json',
          'user-agent': 'switchyard-admin/channel-test',
        },
        body: ping.body,
        signal: deadline,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      status = response.statusCode;
      const text = ping.toOpenAI(status, await readAtMost(response.body, MAX_BODY_BYTES));
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
      if (deadline.aborted || isUndiciTimeout(error)) {
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
  url: string;
  headers: Record<string, string>;
  /** Bedrock signs each request (Signature V4). */
  sign?(url: URL): Promise<Record<string, string>>;
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
      return {
        url: `${target.baseUrl}/v1/models`,
        headers: { authorization: `Bearer ${target.secret}` },
        ids: dataIds,
      };
    case 'anthropic':
      return {
        url: `${target.baseUrl}/v1/models?limit=1000`,
        headers: {
          'x-api-key': target.secret,
          'anthropic-version': target.settings.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION,
        },
        ids: dataIds,
      };
    case 'gemini':
      return {
        url: `${target.baseUrl}/v1beta/models?pageSize=1000`,
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
      const url = `${target.baseUrl.replace('://bedrock-runtime.', '://bedrock.')}/foundation-models`;
      const region = regionOf(target.settings.region, target.baseUrl);
      return {
        url,
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
    const signature = listing.sign ? await listing.sign(new URL(listing.url)) : {};
    const response = await request(listing.url, {
      headers: {
        accept: 'application/json',
        ...listing.headers,
        ...signature,
        'user-agent': 'switchyard-admin/models',
      },
      signal: deadline,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = response.statusCode;
    const text = await readAtMost(response.body, MAX_BODY_BYTES * 8);
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
    const timedOut = deadline.aborted || isUndiciTimeout(error);
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

async function readAtMost(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
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

function isUndiciTimeout(error: unknown): boolean {
  const code =
    typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : '';
  return (
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  );
}

function describe(error: unknown): string {
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
