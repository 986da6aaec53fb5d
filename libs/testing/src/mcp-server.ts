import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

// A real MCP server (the official SDK's server side, Streamable HTTP, stateless) for
// tests: a forecast tool whose address argument allows up to 84 bytes, a slow tool for
// timeouts, and one resource. It records every call it receives and the headers sent.

export const FORECAST_ADDRESS_MAX_BYTES = 84;
export const CITIES_URI = 'weather://cities';

export interface ReceivedCall {
  method: 'tools/call' | 'resources/read';
  name: string;
  arguments?: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

export interface TestMcpServer {
  url: string;
  calls: ReceivedCall[];
  /** The headers of every HTTP request, listings included. */
  requestHeaders: IncomingMessage['headers'][];
  close(): Promise<void>;
}

export interface TestMcpServerOptions {
  /**
   * Refuses every request with 401 and a body that quotes the Authorization header it was
   * sent, as careless servers do: what the chat app must never show (docs/tools.md).
   */
  echoCredentials?: boolean;
}

export function forecastFor(address: string): string {
  return `Forecast for ${address}: sunny, 21 C`;
}

const TOOLS = [
  {
    name: 'get_forecast',
    description: 'Weather forecast for a street address',
    inputSchema: {
      type: 'object',
      title: 'get_forecastArguments',
      properties: {
        address: {
          type: 'string',
          title: 'Address',
          description: `Street address, up to ${FORECAST_ADDRESS_MAX_BYTES} bytes`,
          minLength: 1,
          maxLength: FORECAST_ADDRESS_MAX_BYTES,
        },
      },
      required: ['address'],
      additionalProperties: false,
    },
  },
  {
    name: 'slow_forecast',
    description: 'A forecast that takes its time',
    inputSchema: {
      type: 'object',
      properties: { delayMs: { type: 'integer', minimum: 0, maximum: 60_000 } },
      required: ['delayMs'],
    },
  },
];

function mcpServer(calls: ReceivedCall[], headers: IncomingMessage['headers']): Server {
  const server = new Server(
    { name: 'test-weather', version: '1.0.0' },
    { capabilities: { tools: {}, resources: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    calls.push({ method: 'tools/call', name: request.params.name, arguments: args, headers });
    if (request.params.name === 'get_forecast') {
      const address = String(args.address);
      // The schema counts characters; the limit is in bytes, so the server checks too.
      if (Buffer.byteLength(address) > FORECAST_ADDRESS_MAX_BYTES) {
        return {
          content: [
            { type: 'text', text: `address longer than ${FORECAST_ADDRESS_MAX_BYTES} bytes` },
          ],
          isError: true,
        };
      }
      return { content: [{ type: 'text', text: forecastFor(address) }] };
    }
    if (request.params.name === 'slow_forecast') {
      await sleep(Number(args.delayMs), undefined, { signal: extra.signal }).catch(() => undefined);
      return { content: [{ type: 'text', text: 'slow but sunny' }] };
    }
    return {
      content: [{ type: 'text', text: `unknown tool ${request.params.name}` }],
      isError: true,
    };
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      {
        uri: CITIES_URI,
        name: 'Cities',
        description: 'Cities with forecasts',
        mimeType: 'text/plain',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    calls.push({ method: 'resources/read', name: request.params.uri, headers });
    return {
      contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: 'Paris, Lyon, Nantes' }],
    };
  });
  return server;
}

export async function startTestMcpServer(
  options: TestMcpServerOptions = {},
): Promise<TestMcpServer> {
  const calls: ReceivedCall[] = [];
  const requestHeaders: IncomingMessage['headers'][] = [];
  const http = createServer((req, res) => {
    requestHeaders.push(req.headers);
    if (options.echoCredentials) {
      req.resume();
      res
        .writeHead(401, { 'content-type': 'text/plain' })
        .end(`Invalid credentials: ${req.headers.authorization ?? '(none)'}`);
      return;
    }
    // Stateless: one MCP server and transport per HTTP request.
    const server = mcpServer(calls, req.headers);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    requestHeaders,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
