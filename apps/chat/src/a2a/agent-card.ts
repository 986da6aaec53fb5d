import { AgentCard } from '@a2a-js/sdk';
import { type McpTool } from '../mcp/mcp-session.js';

// The agent card (docs/tools.md, A2A): one JSON-RPC interface, for both protocol
// versions the endpoint speaks, an A2A key as bearer credential, and one skill per
// enabled MCP tool.

/** The JSON-RPC endpoint's path under the origin the card was asked at. */
export const A2A_PATH = '/api/a2a';

export interface CardFacts {
  /** Scheme, host and port the caller reached this app at (the web front's, usually). */
  origin: string;
  model: string | undefined;
  tools: { server: string; tool: McpTool }[];
}

export function agentCard({ origin, model, tools }: CardFacts): AgentCard {
  const url = `${origin}${A2A_PATH}`;
  return AgentCard.fromJSON({
    name: 'Switchyard chat',
    description: model
      ? `Answers tasks with the chat model ${model}, using the tools listed as skills and the agents it may delegate to.`
      : 'Takes no tasks: no model is set to answer them (the A2A model of the chat settings).',
    version: '1.0.0',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    securitySchemes: {
      a2aKey: {
        httpAuthSecurityScheme: {
          scheme: 'Bearer',
          description: 'An A2A key a user of this chat app made (POST /api/me/a2a-keys)',
        },
      },
    },
    securityRequirements: [{ schemes: { a2aKey: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: tools.map(({ server, tool }) => ({
      id: `${server}/${tool.name}`,
      name: tool.name,
      description: tool.description ?? `${tool.name} on ${server}`,
      tags: ['mcp', server],
    })),
  });
}
