import { Injectable, Logger } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { ApiError } from '@switchyard/contracts';
import { isRecordNotFound, isUniqueViolation, type McpServer } from '@switchyard/db';
import { registerSecret } from '@switchyard/observability';
import { SecretCipher } from '@switchyard/security';
import { wholeList } from '@switchyard/service';
import { validateHeaders } from '../common/request-headers.js';
import {
  type AvailableMcpServerPageResponse,
  type CreateMcpServerDto,
  type McpServerPageResponse,
  type McpServerResponse,
  type UpdateMcpServerDto,
} from './mcp-servers.dto.js';
import { McpServersRepository, type McpServerFields } from './mcp-servers.repository.js';
import { describeMcpError, McpSession, type McpEndpoint } from './mcp-session.js';

/** A listing waits at most this long for a server, so one dead server cannot stall it. */
const PROBE_TIMEOUT_MS = 5000;

/** An open session, or why the server could not be reached. */
export type ServerConnection =
  | { server: McpServer; session: McpSession; error?: undefined }
  | { server: McpServer; session?: undefined; error: string };

@Injectable()
export class McpServersService {
  private readonly logger = new Logger(McpServersService.name);

  constructor(
    private readonly servers: McpServersRepository,
    private readonly cipher: SecretCipher,
    private readonly env: ChatEnv,
  ) {}

  async list(): Promise<McpServerPageResponse> {
    const rows = await this.servers.listServers();
    return wholeList(await Promise.all(rows.map((row) => this.describe(row))));
  }

  async get(id: number): Promise<McpServerResponse> {
    return this.describe(await this.find(id));
  }

  /** Enabled servers, for the per-conversation picker. */
  async listAvailable(): Promise<AvailableMcpServerPageResponse> {
    return wholeList((await this.servers.listEnabled()).map(({ id, name }) => ({ id, name })));
  }

  /** Every enabled server's id: the servers an A2A task is offered (docs/tools.md). */
  async enabledIds(): Promise<number[]> {
    return (await this.servers.listEnabled()).map((server) => server.id);
  }

  /** Throws 400 unless every id names an enabled server. */
  async assertSelectable(ids: number[]): Promise<void> {
    const found = new Set((await this.servers.listEnabledAmong(ids)).map((row) => row.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) {
      const message = `No enabled MCP server with id ${missing.join(', ')}`;
      throw new ApiError('validation_failed', message, [{ field: 'mcpServerIds', message }]);
    }
  }

  async create(dto: CreateMcpServerDto): Promise<McpServerResponse> {
    try {
      const server = await this.servers.createServer({
        name: dto.name,
        url: dto.url,
        enabled: dto.enabled ?? true,
        ...this.sealHeaders(dto.headers ?? {}),
      });
      this.logger.log({ message: 'MCP server added', serverId: server.id, url: server.url });
      return this.describe(server);
    } catch (error) {
      throw this.translate(error, dto.name);
    }
  }

  async update(id: number, dto: UpdateMcpServerDto): Promise<McpServerResponse> {
    const fields: McpServerFields = {};
    if (dto.name !== undefined) fields.name = dto.name;
    if (dto.url !== undefined) fields.url = dto.url;
    if (dto.enabled !== undefined) fields.enabled = dto.enabled;
    if (dto.headers !== undefined) Object.assign(fields, this.sealHeaders(dto.headers));
    try {
      const server = await this.servers.updateServer(id, fields);
      this.logger.log({
        message: 'MCP server changed',
        serverId: id,
        fields: Object.keys(fields).filter((field) => field !== 'headersCiphertext'),
      });
      return this.describe(server);
    } catch (error) {
      throw this.translate(error, dto.name, id);
    }
  }

  async remove(id: number): Promise<void> {
    try {
      await this.servers.deleteServer(id);
      this.logger.log({ message: 'MCP server deleted', serverId: id });
    } catch (error) {
      throw this.translate(error, undefined, id);
    }
  }

  /** Opens a session to each enabled server among `ids`; a failure is reported, not thrown. */
  async connect(ids: number[]): Promise<ServerConnection[]> {
    const rows = await this.servers.listEnabledAmong(ids);
    return Promise.all(
      rows.map(async (server): Promise<ServerConnection> => {
        const endpoint = this.endpointOf(server);
        try {
          const session = await McpSession.open(endpoint, this.env.CHAT_TOOL_TIMEOUT_MS);
          return { server, session };
        } catch (error) {
          const reason = describeMcpError(error, endpoint.headers);
          this.logger.warn({ message: 'MCP server unreachable', serverId: server.id, reason });
          return { server, error: reason };
        }
      }),
    );
  }

  private endpointOf(server: McpServer): McpEndpoint {
    const headers = server.headersCiphertext
      ? (JSON.parse(this.cipher.open(server.headersCiphertext)) as Record<string, string>)
      : {};
    // Opened header values are kept out of every log line of this process too.
    for (const value of Object.values(headers)) registerSecret(value);
    return { name: server.name, url: server.url, headers };
  }

  private sealHeaders(
    headers: Record<string, unknown>,
  ): Pick<Required<McpServerFields>, 'headersCiphertext' | 'headerNames'> {
    const valid = validateHeaders(headers);
    const names = Object.keys(valid);
    return {
      headersCiphertext: names.length > 0 ? this.cipher.seal(JSON.stringify(valid)) : null,
      headerNames: names,
    };
  }

  /** The stored server with what it offers now: each listing asks the server. */
  private async describe(server: McpServer): Promise<McpServerResponse> {
    const checkedAt = new Date().toISOString();
    let session: McpSession | undefined;
    let lastError: string | null = null;
    const endpoint = this.endpointOf(server);
    try {
      session = await McpSession.open(
        endpoint,
        Math.min(PROBE_TIMEOUT_MS, this.env.CHAT_TOOL_TIMEOUT_MS),
      );
    } catch (error) {
      lastError = describeMcpError(error, endpoint.headers);
    } finally {
      await session?.close();
    }
    return {
      id: server.id,
      name: server.name,
      url: server.url,
      headerNames: server.headerNames,
      enabled: server.enabled,
      status: { reachable: session !== undefined, lastError, checkedAt },
      tools: (session?.tools ?? []).map((tool) => ({
        name: tool.name,
        description: tool.description ?? null,
        inputSchema: tool.inputSchema,
      })),
      resources: (session?.resources ?? []).map((resource) => ({
        uri: resource.uri,
        name: resource.name,
        description: resource.description ?? null,
        mimeType: resource.mimeType ?? null,
      })),
      createdAt: server.createdAt.toISOString(),
      updatedAt: server.updatedAt.toISOString(),
    };
  }

  private async find(id: number): Promise<McpServer> {
    const server = await this.servers.findServer(id);
    if (!server) throw new ApiError('not_found', `No MCP server with id ${id}`);
    return server;
  }

  private translate(error: unknown, name?: string, id?: number): unknown {
    if (isUniqueViolation(error)) {
      return new ApiError('conflict', `An MCP server named "${name ?? ''}" already exists`);
    }
    if (isRecordNotFound(error))
      return new ApiError('not_found', `No MCP server with id ${id ?? ''}`);
    return error;
  }
}
