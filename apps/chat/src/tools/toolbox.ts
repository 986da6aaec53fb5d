import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation/types.js';
import type OpenAI from 'openai';
import { describeMcpError, type McpSession, type McpTool } from '../mcp/mcp-session.js';
import {
  DELEGATE_INPUT_SCHEMA,
  DelegationError,
  delegateDescription,
  delegateToolName,
  type Delegate,
  type DelegateProgress,
} from './delegate.js';
import { type ToolCallRequest, type ToolErrorCode, type ToolStep } from './tool-step.js';

// The tools of one reply: the sessions to the conversation's servers, their tools by
// name, each tool's compiled argument validator, the remote agents' delegate tools, and
// the names the model knows them by.

/** A tool result longer than this is cut: it is going into the model's context. */
const MAX_RESULT_CHARS = 20_000;
/** OpenAI function names: letters, digits, _ and -, at most 64. */
const FUNCTION_NAME_LIMIT = 64;
/** JSON-RPC's "request timed out" code, as the MCP SDK raises it. */
const MCP_REQUEST_TIMEOUT = -32001;

interface ToolEntry {
  session: McpSession;
  tool: McpTool;
  validate: (input: unknown) => { valid: boolean; errorMessage?: string };
}

export interface UnreachableServer {
  name: string;
  error: string;
}

function functionNameOf(wanted: string, taken: Set<string>): string {
  const base = wanted.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, FUNCTION_NAME_LIMIT);
  let name = base;
  for (let n = 2; taken.has(name); n += 1) {
    const suffix = `_${n}`;
    name = base.slice(0, FUNCTION_NAME_LIMIT - suffix.length) + suffix;
  }
  taken.add(name);
  return name;
}

function isTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === MCP_REQUEST_TIMEOUT || (error as Error | null)?.name === 'TimeoutError';
}

function truncate(text: string): string {
  return text.length > MAX_RESULT_CHARS
    ? `${text.slice(0, MAX_RESULT_CHARS)}\n[… cut at ${MAX_RESULT_CHARS} characters]`
    : text;
}

export class Toolbox {
  private readonly entries = new Map<string, ToolEntry>();
  /** Native function name → server and tool (for a delegate: its agent and tool name). */
  private readonly functions = new Map<string, { server: string; tool: string }>();
  /** Delegate tool name → the remote agent. */
  private readonly delegateByTool = new Map<string, Delegate>();
  private readonly byServer = new Map<string, McpSession>();
  private readonly validator = new AjvJsonSchemaValidator();

  constructor(
    readonly sessions: McpSession[],
    readonly unreachable: UnreachableServer[],
    private readonly timeoutMs: number,
    readonly delegates: Delegate[] = [],
  ) {
    const taken = new Set<string>();
    for (const delegate of delegates) {
      const name = functionNameOf(delegateToolName(delegate.agent), taken);
      this.delegateByTool.set(name, delegate);
      this.functions.set(name, { server: delegate.agent, tool: name });
    }
    for (const session of sessions) {
      this.byServer.set(session.endpoint.name, session);
      for (const tool of session.tools) {
        const validate = this.compile(tool.inputSchema);
        this.entries.set(`${session.endpoint.name}\u0000${tool.name}`, { session, tool, validate });
        this.functions.set(functionNameOf(`${session.endpoint.name}__${tool.name}`, taken), {
          server: session.endpoint.name,
          tool: tool.name,
        });
      }
    }
  }

  get isEmpty(): boolean {
    return (
      this.entries.size === 0 &&
      this.delegates.length === 0 &&
      this.sessions.every((s) => s.resources.length === 0)
    );
  }

  /** The delegate tools by name, for the prompt. */
  delegateTools(): { name: string; delegate: Delegate }[] {
    return [...this.delegateByTool].map(([name, delegate]) => ({ name, delegate }));
  }

  /** The tools as the `tools` request parameter (native mode). */
  nativeTools(): OpenAI.Chat.Completions.ChatCompletionTool[] {
    return [...this.functions].map(([name, { server, tool }]) => {
      const delegate = this.delegateByTool.get(name);
      if (delegate) {
        return {
          type: 'function',
          function: {
            name,
            description: delegateDescription(delegate),
            parameters: DELEGATE_INPUT_SCHEMA,
          },
        };
      }
      const entry = this.entries.get(`${server}\u0000${tool}`)!;
      return {
        type: 'function',
        function: {
          name,
          description: entry.tool.description ?? `${tool} on ${server}`,
          parameters: entry.tool.inputSchema,
        },
      };
    });
  }

  /** Server and tool of a native function name; undefined for a name we never offered. */
  resolveFunction(name: string): { server: string; tool: string } | undefined {
    return this.functions.get(name);
  }

  /** The call as a delegation when it names a delegate tool of that agent. */
  classify(call: ToolCallRequest): ToolCallRequest {
    const delegate = call.tool === undefined ? undefined : this.delegateByTool.get(call.tool);
    return delegate && delegate.agent === call.server ? { ...call, kind: 'delegate' } : call;
  }

  async run(
    call: ToolCallRequest,
    signal: AbortSignal,
    progress: (update: DelegateProgress) => Promise<void> = () => Promise.resolve(),
  ): Promise<ToolStep> {
    const started = performance.now();
    const step = (fields: Partial<ToolStep>): ToolStep => ({
      id: call.id,
      kind: call.kind,
      server: call.server,
      ...(call.tool === undefined ? {} : { tool: call.tool }),
      ...(call.uri === undefined ? {} : { uri: call.uri }),
      ...(call.arguments === undefined ? {} : { arguments: call.arguments }),
      ok: false,
      durationMs: Math.round(performance.now() - started),
      ...fields,
    });
    const fail = (code: ToolErrorCode, message: string) => step({ error: { code, message } });

    if (call.kind === 'delegate') {
      const delegate = this.delegateByTool.get(call.tool ?? '')!;
      const args = call.arguments as { message?: unknown } | null;
      if (typeof args?.message !== 'string' || args.message.trim() === '') {
        return fail('invalid_arguments', 'arguments must be {"message": "the task, in words"}');
      }
      try {
        const answer = await delegate.delegate(args.message, signal, progress);
        return step({ ok: true, result: truncate(answer) });
      } catch (error) {
        if (error instanceof DelegationError) return fail(error.code, error.message);
        throw error;
      }
    }
    const session = this.byServer.get(call.server);
    if (!session && call.server === '') {
      return fail('unknown_tool', `No tool named "${call.tool ?? ''}" was offered`);
    }
    if (!session) {
      const down = this.unreachable.find((server) => server.name === call.server);
      return down
        ? fail('server_unreachable', `MCP server "${call.server}" is unreachable: ${down.error}`)
        : fail('unknown_tool', `No MCP server named "${call.server}" is enabled here`);
    }
    try {
      if (call.kind === 'resource') {
        const text = await session.readResource(call.uri ?? '', this.timeoutMs, signal);
        return step({ ok: true, result: truncate(text) });
      }
      const entry = this.entries.get(`${call.server}\u0000${call.tool ?? ''}`);
      if (!entry) {
        return fail('unknown_tool', `MCP server "${call.server}" has no tool "${call.tool ?? ''}"`);
      }
      // A call the schema refuses goes back to the model, never to the server.
      const args = call.arguments;
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        return fail('invalid_arguments', 'arguments must be a JSON object');
      }
      const check = entry.validate(args);
      if (!check.valid) {
        return fail(
          'invalid_arguments',
          `arguments do not match the tool's input schema: ${check.errorMessage ?? ''}`,
        );
      }
      const result = await session.callTool(
        entry.tool.name,
        args as Record<string, unknown>,
        this.timeoutMs,
        signal,
      );
      return result.isError
        ? fail('tool_failed', truncate(result.text))
        : step({ ok: true, result: truncate(result.text) });
    } catch (error) {
      if (isTimeout(error)) {
        return fail('tool_timeout', `no answer from the tool within ${this.timeoutMs} ms`);
      }
      return fail('tool_failed', describeMcpError(error, session.endpoint.headers));
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.sessions.map((session) => session.close()));
  }

  private compile(schema: JsonSchemaType): ToolEntry['validate'] {
    try {
      return this.validator.getValidator(schema);
    } catch (error) {
      // A server's broken schema must not break the reply: such a tool refuses every call.
      const message = `the tool's input schema is invalid: ${describeMcpError(error)}`;
      return () => ({ valid: false, errorMessage: message });
    }
  }
}
