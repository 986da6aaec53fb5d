import { Injectable, Logger } from '@nestjs/common';
import { A2A_VERSION_HEADER, AgentCard } from '@a2a-js/sdk';
import { A2A_LEGACY_PROTOCOL_VERSION } from '@a2a-js/sdk/compat/v0_3';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import {
  DefaultRequestHandler,
  JsonRpcTransportHandler,
  ServerCallContext,
  validateVersion,
} from '@a2a-js/sdk/server';
import { ChatEnv } from '@switchyard/config';
import { McpServersService } from '../mcp/mcp-servers.service.js';
import { ChatSettingsService } from '../settings/chat-settings.service.js';
import { type Principal } from '../auth/principal.js';
import {
  INTERNAL_ERROR_MESSAGE,
  JSON_RPC_INTERNAL_ERROR,
  JSON_RPC_INVALID_PARAMS,
  invalidParams,
} from './a2a-params.js';
import { agentCard } from './agent-card.js';
import { ChatAgentExecutor, PRINCIPAL_STATE } from './chat-agent.executor.js';
import { A2aUser, PrismaTaskStore } from './task-store.js';

// The protocol side of the A2A endpoint, framework-free: the SDK's request handler over
// our executor and task store, and its JSON-RPC transports for both protocol versions
// (a request without an A2A-Version header is v0.3, as the SDK's own adapters decide).

export interface JsonRpcEnvelope {
  jsonrpc: string;
  id: string | number | null;
  result?: unknown;
  error?: unknown;
}

export type JsonRpcOutcome = JsonRpcEnvelope | AsyncGenerator<JsonRpcEnvelope, void, undefined>;

@Injectable()
export class A2aEndpointService {
  private readonly logger = new Logger('A2aEndpoint');
  private readonly handler: DefaultRequestHandler;
  private readonly current: JsonRpcTransportHandler;
  private readonly legacy: LegacyJsonRpcTransportHandler;
  /** What the handler checks versions against; the served card adds origin and skills. */
  private readonly baseCard: AgentCard;

  constructor(
    executor: ChatAgentExecutor,
    store: PrismaTaskStore,
    private readonly servers: McpServersService,
    private readonly settings: ChatSettingsService,
    env: ChatEnv,
  ) {
    // Only for the protocol version checks: the served card names the model set now.
    this.baseCard = agentCard({ origin: '', model: env.CHAT_A2A_MODEL, tools: [] });
    this.handler = new DefaultRequestHandler(this.baseCard, store, executor);
    this.current = new JsonRpcTransportHandler(this.handler);
    this.legacy = new LegacyJsonRpcTransportHandler(this.handler);
  }

  /** The card as seen from `origin`; asks every enabled MCP server for its tools. */
  async card(origin: string): Promise<unknown> {
    const connections = await this.servers.connect(await this.servers.enabledIds());
    try {
      const tools = connections.flatMap((c) =>
        c.session ? c.session.tools.map((tool) => ({ server: c.server.name, tool })) : [],
      );
      const model = (await this.settings.a2aModel()) ?? undefined;
      return AgentCard.toJSON(agentCard({ origin, model, tools }));
    } finally {
      await Promise.all(connections.flatMap((c) => (c.session ? [c.session.close()] : [])));
    }
  }

  isLegacy(version: string | undefined): boolean {
    return (version ?? A2A_LEGACY_PROTOCOL_VERSION) === A2A_LEGACY_PROTOCOL_VERSION;
  }

  /** Runs one JSON-RPC request for the key's user; protocol errors come back as envelopes. */
  async handle(
    body: unknown,
    principal: Principal,
    version: string | undefined,
  ): Promise<JsonRpcOutcome> {
    const context = new ServerCallContext({
      user: new A2aUser(principal.id),
      requestedVersion: version,
      state: new Map([[PRINCIPAL_STATE, principal]]),
    });
    const legacy = this.isLegacy(version);
    const problem = invalidParams(body);
    if (problem !== null) {
      return {
        jsonrpc: '2.0',
        id: idOf(body),
        error: { code: JSON_RPC_INVALID_PARAMS, message: `Invalid params: ${problem}` },
      };
    }
    try {
      validateVersion(context.requestedVersion, this.baseCard, 'JSONRPC');
      const transport = legacy ? this.legacy : this.current;
      const outcome = await transport.handle(body as Record<string, unknown>, context);
      if ('jsonrpc' in outcome && outcome.error !== undefined) {
        return { ...outcome, error: withoutInternals(outcome.error, outcome.error, this.logger) };
      }
      return outcome;
    } catch (error) {
      return { jsonrpc: '2.0', id: idOf(body), error: this.mapError(error, legacy) };
    }
  }

  mapError(error: unknown, legacy: boolean): unknown {
    return withoutInternals(
      legacy
        ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error)
        : JsonRpcTransportHandler.mapToJSONRPCError(error),
      error,
      this.logger,
    );
  }
}

/**
 * An internal error as the client sees it: the generic message only. What the SDK put in
 * it (a JavaScript error's text, such as "taskId.trim is not a function") goes to the log.
 */
export function withoutInternals(mapped: unknown, cause: unknown, logger: Logger): unknown {
  const error = mapped as { code?: unknown } | null;
  if (error?.code !== JSON_RPC_INTERNAL_ERROR) return mapped;
  logger.error(
    `A2A request failed: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`,
  );
  return { code: JSON_RPC_INTERNAL_ERROR, message: INTERNAL_ERROR_MESSAGE };
}

/** The header the client names its protocol version in. */
export const VERSION_HEADER = A2A_VERSION_HEADER.toLowerCase();

export function idOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
