import Anthropic from '@anthropic-ai/sdk';
import { waitFor, query } from '@switchyard/testing';
import type OpenAI from 'openai';
import {
  freshAccount,
  Stack,
  STACK_START_TIMEOUT_MS,
  uniqueName,
  type ChannelSpec,
} from './stack.js';

// A metered gateway with channels of any provider behind it, and the openai and anthropic
// SDKs in front: the fixture of the specs that check what the edge converts and meters
// for each provider (docs/providers.md).

export interface ProviderGateway {
  stack: Stack;
  /** The token every request of the spec is made with. */
  token: { id: number; key: string; keyHash: string };
  /** The openai SDK, with the token. */
  openai: OpenAI;
  /** The anthropic SDK, with the token as its `x-api-key`. */
  anthropic: Anthropic;
}

/**
 * Starts a gateway with metering workers before the calling `describe` block's tests and
 * stops it after them. The token and the clients are set once its `beforeAll` has run.
 */
export function useProviderGateway(): ProviderGateway {
  const gateway = { stack: new Stack({ metering: true }) } as ProviderGateway;
  beforeAll(async () => {
    await gateway.stack.start();
    gateway.token = await gateway.stack.createToken();
    gateway.openai = gateway.stack.client(gateway.token.key);
    gateway.anthropic = anthropicClient(gateway.stack, gateway.token.key);
  }, STACK_START_TIMEOUT_MS);
  afterAll(() => gateway.stack.stop());
  return gateway;
}

/**
 * The anthropic SDK against the edge, with the token as its `x-api-key`, or (`bearer`) as
 * `Authorization: Bearer` the way Claude Code sends it.
 */
export function anthropicClient(
  stack: Stack,
  tokenKey: string,
  options: { bearer?: boolean } = {},
): Anthropic {
  return new Anthropic({
    apiKey: options.bearer ? null : tokenKey,
    authToken: options.bearer ? tokenKey : undefined,
    baseURL: stack.edge.url,
    maxRetries: 0,
    timeout: 20_000,
  });
}

/** A model of its own, priced per million tokens: 1 USD in, 0.10 USD cached in, 2 USD out. */
export async function pricedModel(stack: Stack, prefix: string): Promise<string> {
  const model = uniqueName(prefix);
  await query(
    stack.databaseUrl,
    `INSERT INTO "ModelPrice" (model, "inputPrice", "outputPrice", "cachedInputPrice", "updatedAt")
     VALUES ($1, 1000000, 2000000, 100000, now())`,
    [model],
  );
  await stack.publish('price.changed', { model });
  return model;
}

/** A fresh AWS key pair (`ACCESS_KEY_ID:secret`), registered as an account of the mock. */
export async function freshKeyPair(stack: Stack): Promise<string> {
  const id = uniqueName('AKIA')
    .replace(/[^A-Za-z0-9]/g, '')
    .toUpperCase()
    .slice(0, 20)
    .padEnd(20, '0');
  const key = `${id}:${uniqueName('secret')
    .replace(/[^A-Za-z0-9]/g, '')
    .padEnd(40, 'x')}`;
  await stack.mockAccount(key);
  return key;
}

export interface ProviderChannel {
  /** The priced model the client asks for. */
  model: string;
  /** The channel's one key, an account of the mock upstream. */
  account: string;
  channelId: number;
}

export interface ProviderChannelSpec {
  /** Names the priced model. */
  prefix: string;
  provider: NonNullable<ChannelSpec['provider']>;
  /** What the channel's mapping renames the model to. */
  upstreamModel: string;
  providerSettings?: Record<string, string>;
  /** The channel's key; a fresh mock account otherwise. */
  account?: string;
  /** More models the channel serves (unpriced), with their upstream names. */
  alsoServes?: Record<string, string>;
}

/** A channel of one provider serving a priced model of its own; resolves once the token can use it. */
export async function providerChannel(
  gateway: ProviderGateway,
  spec: ProviderChannelSpec,
): Promise<ProviderChannel> {
  const { stack, token } = gateway;
  const model = await pricedModel(stack, spec.prefix);
  const account = spec.account ?? (await freshAccount(stack));
  const { id } = await stack.createChannel({
    models: [model, ...Object.keys(spec.alsoServes ?? {})],
    keys: [account],
    provider: spec.provider,
    providerSettings: spec.providerSettings,
    modelMapping: { [model]: spec.upstreamModel, ...spec.alsoServes },
  });
  await stack.routable(token.key, model);
  return { model, account, channelId: id };
}

export interface UsageRow {
  endpoint: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  tokensCounted: boolean;
  cost: string;
  status: number;
  stream: boolean;
  channelId: number;
}

const USAGE_COLUMNS = `endpoint, "promptTokens", "completionTokens", "cachedTokens", "tokensCounted", cost::text, status, stream, "channelId"`;

/** The usage row of a request (its `x-request-id`), once metering has settled it. */
export async function usageRow(stack: Stack, requestId: string): Promise<UsageRow> {
  return waitFor(
    async () =>
      (
        await query<UsageRow>(
          stack.databaseUrl,
          `SELECT ${USAGE_COLUMNS} FROM "UsageLog" WHERE "requestId" = $1`,
          [requestId],
        )
      )[0],
    { what: `usage row ${requestId}` },
  );
}

/**
 * The row of a channel's one streamed request, for when the SDK's stream helper keeps the
 * HTTP response to itself, and with it the request id.
 */
export async function streamedUsageRow(stack: Stack, channelId: number): Promise<UsageRow> {
  return waitFor(
    async () =>
      (
        await query<UsageRow>(
          stack.databaseUrl,
          `SELECT ${USAGE_COLUMNS} FROM "UsageLog" WHERE "channelId" = $1 AND stream`,
          [channelId],
        )
      )[0],
    { what: `streamed usage row of channel ${channelId}` },
  );
}

/** The last request the mock upstream received for an account. */
export async function lastSent(
  stack: Stack,
  account: string,
): Promise<{ path: string; headers: Record<string, string>; body: Record<string, unknown> }> {
  return (await stack.mockRequests(account)).at(-1)!;
}
