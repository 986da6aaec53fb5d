import { Injectable, Logger } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { ApiError } from '@switchyard/contracts';
import { isRecordNotFound, isUniqueViolation, type A2aAgent } from '@switchyard/db';
import { registerSecret } from '@switchyard/observability';
import { SecretCipher } from '@switchyard/security';
import { wholeList } from '@switchyard/service';
import { validateHeaders } from '../common/request-headers.js';
import { delegateToolName, type Delegate } from '../tools/delegate.js';
import { type UnreachableServer } from '../tools/toolbox.js';
import {
  type A2aAgentPageResponse,
  type A2aAgentResponse,
  type CreateA2aAgentDto,
  type UpdateA2aAgentDto,
} from './a2a-agents.dto.js';
import { A2aAgentsRepository, type A2aAgentFields } from './a2a-agents.repository.js';
import { describeAgentError, RemoteAgent, type AgentEndpoint } from './remote-agent.js';

/** A listing or a reply waits at most this long for an agent's card. */
const CARD_TIMEOUT_MS = 5000;

// The remote A2A agents chat administrators register (docs/tools.md, A2A). Like MCP
// servers, nothing the agent says about itself is stored: its card is read live.

@Injectable()
export class A2aAgentsService {
  private readonly logger = new Logger(A2aAgentsService.name);

  constructor(
    private readonly agents: A2aAgentsRepository,
    private readonly cipher: SecretCipher,
    private readonly env: ChatEnv,
  ) {}

  async list(): Promise<A2aAgentPageResponse> {
    const rows = await this.agents.listAgents();
    return wholeList(await Promise.all(rows.map((row) => this.describe(row))));
  }

  async get(id: number): Promise<A2aAgentResponse> {
    const agent = await this.agents.findAgent(id);
    if (!agent) throw notFound(id);
    return this.describe(agent);
  }

  async create(dto: CreateA2aAgentDto): Promise<A2aAgentResponse> {
    try {
      const agent = await this.agents.createAgent({
        name: dto.name,
        cardUrl: dto.cardUrl,
        enabled: dto.enabled ?? true,
        ...this.sealHeaders(dto.headers ?? {}),
      });
      this.logger.log({ message: 'A2A agent added', agentId: agent.id, cardUrl: agent.cardUrl });
      return this.describe(agent);
    } catch (error) {
      throw translate(error, dto.name);
    }
  }

  async update(id: number, dto: UpdateA2aAgentDto): Promise<A2aAgentResponse> {
    const fields: A2aAgentFields = {};
    if (dto.name !== undefined) fields.name = dto.name;
    if (dto.cardUrl !== undefined) fields.cardUrl = dto.cardUrl;
    if (dto.enabled !== undefined) fields.enabled = dto.enabled;
    if (dto.headers !== undefined) Object.assign(fields, this.sealHeaders(dto.headers));
    try {
      const agent = await this.agents.updateAgent(id, fields);
      this.logger.log({
        message: 'A2A agent changed',
        agentId: id,
        fields: Object.keys(fields).filter((field) => field !== 'headersCiphertext'),
      });
      return this.describe(agent);
    } catch (error) {
      throw translate(error, dto.name, id);
    }
  }

  async remove(id: number): Promise<void> {
    try {
      await this.agents.deleteAgent(id);
      this.logger.log({ message: 'A2A agent deleted', agentId: id });
    } catch (error) {
      throw translate(error, undefined, id);
    }
  }

  anyEnabled(): Promise<boolean> {
    return this.agents.anyEnabled();
  }

  /** Every enabled agent as a delegate, or why its card could not be read. */
  async connect(): Promise<{ delegates: Delegate[]; unreachable: UnreachableServer[] }> {
    const rows = await this.agents.listEnabled();
    const opened = await Promise.all(
      rows.map(async (row) => {
        try {
          return { agent: await this.open(row) };
        } catch (error) {
          const reason = describeAgentError(error);
          this.logger.warn({ message: 'A2A agent unreachable', agentId: row.id, reason });
          return { unreachable: { name: row.name, error: reason } };
        }
      }),
    );
    return {
      delegates: opened.flatMap((o) => (o.agent ? [o.agent] : [])),
      unreachable: opened.flatMap((o) => (o.unreachable ? [o.unreachable] : [])),
    };
  }

  private open(agent: A2aAgent): Promise<RemoteAgent> {
    return RemoteAgent.open(
      this.endpointOf(agent),
      CARD_TIMEOUT_MS,
      this.env.CHAT_A2A_DELEGATE_TIMEOUT_MS,
    );
  }

  private endpointOf(agent: A2aAgent): AgentEndpoint {
    const headers = agent.headersCiphertext
      ? (JSON.parse(this.cipher.open(agent.headersCiphertext)) as Record<string, string>)
      : {};
    // Opened header values are kept out of every log line of this process too.
    for (const value of Object.values(headers)) registerSecret(value);
    return { name: agent.name, cardUrl: agent.cardUrl, headers };
  }

  private sealHeaders(
    headers: Record<string, unknown>,
  ): Pick<Required<A2aAgentFields>, 'headersCiphertext' | 'headerNames'> {
    const valid = validateHeaders(headers);
    const names = Object.keys(valid);
    return {
      headersCiphertext: names.length > 0 ? this.cipher.seal(JSON.stringify(valid)) : null,
      headerNames: names,
    };
  }

  /** The stored agent with its card as read now. */
  private async describe(agent: A2aAgent): Promise<A2aAgentResponse> {
    const checkedAt = new Date().toISOString();
    let remote: RemoteAgent | undefined;
    let lastError: string | null = null;
    try {
      remote = await this.open(agent);
    } catch (error) {
      lastError = describeAgentError(error);
    }
    const card = remote?.card;
    return {
      id: agent.id,
      name: agent.name,
      tool: delegateToolName(agent.name),
      cardUrl: agent.cardUrl,
      headerNames: agent.headerNames,
      enabled: agent.enabled,
      status: { reachable: remote !== undefined, lastError, checkedAt },
      card: card
        ? {
            name: card.name,
            description: card.description,
            version: card.version,
            skills: card.skills.map(({ id, name, description }) => ({ id, name, description })),
          }
        : null,
      createdAt: agent.createdAt.toISOString(),
      updatedAt: agent.updatedAt.toISOString(),
    };
  }
}

function notFound(id: number | undefined): ApiError {
  return new ApiError('not_found', `No A2A agent with id ${id ?? ''}`);
}

function translate(error: unknown, name?: string, id?: number): unknown {
  if (isUniqueViolation(error)) {
    return new ApiError('conflict', `An A2A agent named "${name ?? ''}" already exists`);
  }
  if (isRecordNotFound(error)) return notFound(id);
  return error;
}
