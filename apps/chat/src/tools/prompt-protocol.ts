import { randomUUID } from 'node:crypto';
import { type McpSession } from '../mcp/mcp-session.js';
import { DELEGATE_INPUT_SCHEMA, delegateDescription, type Delegate } from './delegate.js';
import { resultForModel, type ToolCallRequest, type ToolStep } from './tool-step.js';

// Prompt mode (docs/tools.md): the tool definitions are written into the system prompt,
// the model answers with a command in the text, and the result comes back as the next
// user turn. Works with any model; costs input tokens for every definition.

interface SchemaProperty {
  type?: string | string[];
  title?: string;
  description?: string;
}

function argumentLines(schema: Record<string, unknown>): string[] {
  const properties = (schema.properties ?? {}) as Record<string, SchemaProperty>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => {
    const type = Array.isArray(property.type)
      ? property.type.join(' | ')
      : (property.type ?? 'any');
    const about = property.description ?? property.title ?? '';
    return `    - ${name} (${type}${required.has(name) ? ', required' : ''})${about ? `: ${about}` : ''}`;
  });
}

/** A delegate tool, written as a tool of a server named after its agent. */
function delegateSection(name: string, delegate: Delegate): string {
  return [
    `## Server \`${delegate.agent}\``,
    [
      `### Tool \`${name}\` on server \`${delegate.agent}\``,
      delegateDescription(delegate),
      '  Arguments:',
      ...argumentLines(DELEGATE_INPUT_SCHEMA),
      `  Input schema: ${JSON.stringify(DELEGATE_INPUT_SCHEMA)}`,
    ].join('\n'),
  ].join('\n\n');
}

/** The system prompt that describes every tool and resource and how to use them. */
export function toolPrompt(
  sessions: McpSession[],
  delegates: { name: string; delegate: Delegate }[] = [],
): string {
  const sections = sessions.map((session) => {
    const server = session.endpoint.name;
    const tools = session.tools.map((tool) =>
      [
        `### Tool \`${tool.name}\` on server \`${server}\``,
        tool.description ?? '',
        '  Arguments:',
        ...argumentLines(tool.inputSchema as Record<string, unknown>),
        `  Input schema: ${JSON.stringify(tool.inputSchema)}`,
      ].join('\n'),
    );
    const resources = session.resources.map(
      (resource) =>
        `### Resource \`${resource.uri}\` on server \`${server}\`\n${resource.name}${resource.description ? `: ${resource.description}` : ''}`,
    );
    return [`## Server \`${server}\``, ...tools, ...resources].join('\n\n');
  });
  return [
    'You can use tools and read resources provided by MCP servers.',
    "To call a tool, answer with this command, the arguments being a JSON object that matches the tool's input schema:",
    '<use_mcp_tool>\n<server_name>server name</server_name>\n<tool_name>tool name</tool_name>\n<arguments>{"name": "value"}</arguments>\n</use_mcp_tool>',
    'To read a resource, answer with:',
    '<access_mcp_resource>\n<server_name>server name</server_name>\n<uri>resource URI</uri>\n</access_mcp_resource>',
    'Use one command per answer and wait: its result arrives as the next user message. When you need no tool, answer normally.',
    '# Available tools and resources',
    ...sections,
    ...delegates.map(({ name, delegate }) => delegateSection(name, delegate)),
  ].join('\n\n');
}

const TOOL_COMMAND = /<use_mcp_tool>([\s\S]*?)<\/use_mcp_tool>/;
const RESOURCE_COMMAND = /<access_mcp_resource>([\s\S]*?)<\/access_mcp_resource>/;

function field(body: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(body);
  return match?.[1]?.trim();
}

/** The first command in the model's answer, or null when it answered without one. */
export function parseCommand(text: string): ToolCallRequest | null {
  const tool = TOOL_COMMAND.exec(text);
  const resource = RESOURCE_COMMAND.exec(text);
  const first = tool && (!resource || tool.index < resource.index) ? tool : null;
  const id = `prompt_${randomUUID()}`;
  if (first) {
    const body = first[1] ?? '';
    const raw = field(body, 'arguments') ?? '{}';
    let args: unknown = raw;
    try {
      args = JSON.parse(raw) as unknown;
    } catch {
      // Left as text: the toolbox answers the model that it is not a JSON object.
    }
    return {
      id,
      kind: 'tool',
      server: field(body, 'server_name') ?? '',
      tool: field(body, 'tool_name') ?? '',
      arguments: args,
    };
  }
  if (resource) {
    const body = resource[1] ?? '';
    return {
      id,
      kind: 'resource',
      server: field(body, 'server_name') ?? '',
      uri: field(body, 'uri') ?? '',
    };
  }
  return null;
}

/** The user turn that carries a step's result back to the model. */
export function resultTurn(step: ToolStep): string {
  const header =
    step.kind === 'resource'
      ? `[access_mcp_resource for '${step.server}' ${step.uri ?? ''}] Result:`
      : `[use_mcp_tool for '${step.server}/${step.tool ?? ''}'] Result:`;
  return `${header}\n${resultForModel(step)}`;
}
