import { Injectable } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import OpenAI from 'openai';
import { type UpstreamTarget } from './upstream-target.js';

// Every upstream is reached with the official OpenAI client (docs/specification.md,
// "Upstream formats": OpenAI format only). Retries are ours, across records, so the client
// never retries on its own.

/** A turn of the conversation; a question with images carries them as content parts. */
export type ChatTurn =
  | { role: 'user'; content: string | OpenAI.Chat.Completions.ChatCompletionContentPart[] }
  | { role: 'assistant'; content: string };

/** Any message the loop sends: also system prompts, tool calls and tool results. */
export type ModelMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type ModelTool = OpenAI.Chat.Completions.ChatCompletionTool;

/** A piece of a streamed tool call: the first names it, later ones add argument text. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

export interface StreamedPiece {
  content: string;
  toolCalls: ToolCallDelta[];
  usage: { promptTokens: number; completionTokens: number } | null;
}

export interface GeneratedImages {
  urls: string[];
  usage: { promptTokens: number; completionTokens: number } | null;
}

@Injectable()
export class UpstreamClient {
  constructor(private readonly env: ChatEnv) {}

  get timeoutMs(): number {
    return this.env.CHAT_UPSTREAM_TIMEOUT_MS;
  }

  private client(target: UpstreamTarget): OpenAI {
    return new OpenAI({
      baseURL: `${target.address}/v1`,
      apiKey: target.apiKey,
      timeout: this.env.CHAT_UPSTREAM_TIMEOUT_MS,
      maxRetries: 0,
      // Nothing from the OPENAI_* environment may leak into calls to a relay.
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      logLevel: 'off',
    });
  }

  /**
   * Starts a streamed chat completion. Resolves once the upstream has answered (the
   * client's timeout covers the wait for that); the pieces follow as they arrive.
   */
  async streamChat(
    target: UpstreamTarget,
    model: string,
    messages: ModelMessage[],
    signal: AbortSignal,
    tools?: ModelTool[],
    maxTokens?: number,
  ): Promise<AsyncIterable<StreamedPiece>> {
    const stream = await this.client(target).chat.completions.create(
      {
        model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
        ...(tools && tools.length > 0 ? { tools } : {}),
        ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
      },
      { signal },
    );
    return (async function* pieces() {
      for await (const chunk of stream) {
        const usage = chunk.usage
          ? {
              promptTokens: chunk.usage.prompt_tokens,
              completionTokens: chunk.usage.completion_tokens,
            }
          : null;
        const delta = chunk.choices[0]?.delta;
        const toolCalls = (delta?.tool_calls ?? []).map((call) => ({
          index: call.index,
          id: call.id,
          name: call.function?.name,
          arguments: call.function?.arguments,
        }));
        yield { content: delta?.content ?? '', toolCalls, usage };
      }
    })();
  }

  /**
   * `/v1/images/generations` (drawing models use a drawing record: docs/specification.md,
   * "Chat upstream records").
   */
  async generateImages(
    target: UpstreamTarget,
    model: string,
    prompt: string,
    signal: AbortSignal,
  ): Promise<GeneratedImages> {
    const response = await this.client(target).images.generate({ model, prompt, n: 1 }, { signal });
    const urls = (response.data ?? [])
      .map(
        (image) => image.url ?? (image.b64_json ? `data:image/png;base64,${image.b64_json}` : ''),
      )
      .filter((url) => url !== '');
    const usage = response.usage
      ? {
          promptTokens: response.usage.input_tokens ?? 0,
          completionTokens: response.usage.output_tokens ?? 0,
        }
      : null;
    return { urls, usage };
  }
}
