import { Injectable } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { type EventSink } from '../conversations/event-stream.js';
import { A2aAgentsService } from '../a2a-agents/a2a-agents.service.js';
import { ChatMetrics } from '../common/chat-metrics.js';
import { McpServersService } from '../mcp/mcp-servers.service.js';
import { type ModelMessage, type ModelTool, type ChatTurn } from '../upstream/upstream-client.js';
import { parseCommand, resultTurn, toolPrompt } from './prompt-protocol.js';
import { Toolbox } from './toolbox.js';
import { resultForModel, type ToolCallRequest, type ToolStep } from './tool-step.js';

// The tool loop (docs/tools.md): the model is called, the tools it asks for run, their
// results go back, until it answers without a tool call or MAX_TOOL_STEPS rounds of
// tool calls have run. Each model call goes through the caller's `callModel`, which
// streams text to the browser and meters the call like any other (through the gateway).

export const MAX_TOOL_STEPS = 8;

export type ToolMode = 'native' | 'prompt';

/** A finished model call: its text and the tool calls it asked for (native mode). */
export interface ModelTurn {
  content: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  /** The call failed; the caller has recorded why. */
  failed: boolean;
}

export type CallModel = (messages: ModelMessage[], tools?: ModelTool[]) => Promise<ModelTurn>;

export interface LoopResult {
  steps: ToolStep[];
  /** The model still asked for tools after MAX_TOOL_STEPS rounds. */
  limitReached: boolean;
}

/** Tokens of text, roughly (four characters a token): what the definitions cost. */
function approximateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function parseArguments(raw: string): unknown {
  try {
    return JSON.parse(raw === '' ? '{}' : raw) as unknown;
  } catch {
    return raw;
  }
}

@Injectable()
export class ToolLoopService {
  constructor(
    private readonly servers: McpServersService,
    private readonly agents: A2aAgentsService,
    private readonly env: ChatEnv,
    private readonly metrics: ChatMetrics,
  ) {}

  /** Whether a remote agent is offered even where no MCP server is enabled. */
  hasDelegates(): Promise<boolean> {
    return this.agents.anyEnabled();
  }

  async run(
    mode: ToolMode,
    serverIds: number[],
    turns: ChatTurn[],
    sink: EventSink,
    callModel: CallModel,
  ): Promise<LoopResult> {
    const [connections, agents] = await Promise.all([
      this.servers.connect(serverIds),
      this.agents.connect(),
    ]);
    const sessions = connections.flatMap((c) => (c.session ? [c.session] : []));
    const unreachable = [
      ...connections.flatMap((c) =>
        c.error === undefined ? [] : [{ name: c.server.name, error: c.error }],
      ),
      ...agents.unreachable,
    ];
    const toolbox = new Toolbox(
      sessions,
      unreachable,
      this.env.CHAT_TOOL_TIMEOUT_MS,
      agents.delegates,
    );
    try {
      return await this.loop(mode, toolbox, turns, sink, callModel);
    } finally {
      await toolbox.close();
    }
  }

  private async loop(
    mode: ToolMode,
    toolbox: Toolbox,
    turns: ChatTurn[],
    sink: EventSink,
    callModel: CallModel,
  ): Promise<LoopResult> {
    const steps: ToolStep[] = unreachableSteps(toolbox);
    const tools = mode === 'native' && !toolbox.isEmpty ? toolbox.nativeTools() : undefined;
    const prompt =
      mode === 'prompt' && !toolbox.isEmpty
        ? toolPrompt(toolbox.sessions, toolbox.delegateTools())
        : null;
    await sink.send('tools', {
      mode,
      servers: [
        ...toolbox.sessions.map((s) => ({ name: s.endpoint.name, reachable: true })),
        ...toolbox.delegates.map((d) => ({ name: d.agent, reachable: true })),
        ...toolbox.unreachable.map((s) => ({ name: s.name, reachable: false, error: s.error })),
      ],
      definitionTokens: approximateTokens(prompt ?? JSON.stringify(tools ?? [])),
    });
    for (const step of steps) {
      this.metrics.toolStep(step);
      await sink.send('tool_result', step);
    }

    const messages: ModelMessage[] = [
      ...(prompt === null ? [] : [{ role: 'system' as const, content: prompt }]),
      ...turns,
    ];
    for (let round = 0; ; round += 1) {
      const turn = await callModel(messages, tools);
      if (turn.failed) return { steps, limitReached: false };
      const calls = this.callsOf(mode, turn, toolbox);
      if (calls.length === 0 || sink.gone.aborted) return { steps, limitReached: false };
      if (round === MAX_TOOL_STEPS) return { steps, limitReached: true };

      const results: ToolStep[] = [];
      for (const call of calls) {
        await sink.send('tool_call', call);
        const step = await toolbox.run(call, sink.gone, (update) =>
          sink.send('tool_progress', { id: call.id, ...update }),
        );
        this.metrics.toolStep(step);
        await sink.send('tool_result', step);
        results.push(step);
      }
      steps.push(...results);
      if (mode === 'native') {
        messages.push({
          role: 'assistant',
          content: turn.content === '' ? null : turn.content,
          tool_calls: turn.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
        });
        for (const step of results) {
          messages.push({ role: 'tool', tool_call_id: step.id, content: resultForModel(step) });
        }
      } else {
        messages.push({ role: 'assistant', content: turn.content });
        messages.push({ role: 'user', content: resultTurn(results[0]!) });
      }
    }
  }

  private callsOf(mode: ToolMode, turn: ModelTurn, toolbox: Toolbox): ToolCallRequest[] {
    if (mode === 'prompt') {
      const command = parseCommand(turn.content);
      return command ? [toolbox.classify(command)] : [];
    }
    return turn.toolCalls.map((call) => {
      const target = toolbox.resolveFunction(call.name);
      return toolbox.classify({
        id: call.id,
        kind: 'tool',
        // A name we never offered: the toolbox answers the model that it does not exist.
        server: target?.server ?? '',
        tool: target?.tool ?? call.name,
        arguments: parseArguments(call.arguments),
      });
    });
  }
}

function unreachableSteps(toolbox: Toolbox): ToolStep[] {
  return toolbox.unreachable.map((server) => ({
    id: `connect_${server.name}`,
    kind: 'connect',
    server: server.name,
    ok: false,
    error: { code: 'server_unreachable', message: server.error },
    durationMs: 0,
  }));
}
