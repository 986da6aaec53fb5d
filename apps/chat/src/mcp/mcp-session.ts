import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import { redactSecrets, removeSecrets } from '@switchyard/observability';

// One connection to one MCP server over Streamable HTTP, with the official SDK client.
// A session lives as long as one listing or one reply's tool loop, then closes: servers
// are few and the loop is short, so nothing is pooled (docs/tools.md).

export interface McpEndpoint {
  name: string;
  url: string;
  headers: Record<string, string>;
}

export type McpTool = Pick<Tool, 'name' | 'description' | 'inputSchema'>;
export type McpResource = Pick<Resource, 'uri' | 'name' | 'description' | 'mimeType'>;

const CLIENT_INFO = { name: 'switchyard-chat', version: '1.0.0' };

export class McpSession {
  private constructor(
    readonly endpoint: McpEndpoint,
    private readonly client: Client,
    readonly tools: McpTool[],
    readonly resources: McpResource[],
  ) {}

  /** Connects and lists the server's tools and resources; throws when it cannot. */
  static async open(endpoint: McpEndpoint, timeoutMs: number): Promise<McpSession> {
    const client = new Client(CLIENT_INFO);
    const transport = new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: endpoint.headers },
    });
    try {
      await client.connect(transport, { timeout: timeoutMs });
      const capabilities = client.getServerCapabilities();
      const tools = capabilities?.tools
        ? (await client.listTools(undefined, { timeout: timeoutMs })).tools
        : [];
      const resources = capabilities?.resources
        ? (await client.listResources(undefined, { timeout: timeoutMs })).resources
        : [];
      return new McpSession(
        endpoint,
        client,
        tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
        resources.map(({ uri, name, description, mimeType }) => ({
          uri,
          name,
          description,
          mimeType,
        })),
      );
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  /** The tool's answer as text; throws on a protocol error or timeout. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ text: string; isError: boolean }> {
    const result = (await this.client.callTool({ name, arguments: args }, undefined, {
      timeout: timeoutMs,
      signal,
    })) as CallToolResult;
    const text = result.content
      .map((part) => (part.type === 'text' ? part.text : JSON.stringify(part)))
      .join('\n');
    // The text reaches the model, the browser and the stored reply: a server's error may
    // quote the credential it was sent (docs/architecture.md, "Secrets in error text").
    const secrets = Object.values(this.endpoint.headers);
    return result.isError === true
      ? { text: redactSecrets(text, secrets), isError: true }
      : { text: removeSecrets(text, secrets), isError: false };
  }

  async readResource(uri: string, timeoutMs: number, signal: AbortSignal): Promise<string> {
    const result = await this.client.readResource({ uri }, { timeout: timeoutMs, signal });
    const text = result.contents
      .map((part) => ('text' in part ? part.text : `[${part.mimeType ?? 'binary'} content]`))
      .join('\n');
    return removeSecrets(text, Object.values(this.endpoint.headers));
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
  }
}

/** A short, stable description of why a server could not be used. */
export function describeMcpError(error: unknown, headers: Record<string, string> = {}): string {
  let text = String(error);
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: { code?: string } }).cause;
    text = cause?.code ? `${error.message} (${cause.code})` : error.message;
  }
  // A server's refusal may quote the header it was sent; its values are never shown
  // (docs/tools.md), so not in a status, a step or a log line either.
  return redactSecrets(text, Object.values(headers));
}
