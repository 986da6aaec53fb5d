import { type ChannelProvider, type ProviderSettings } from '@switchyard/contracts';
import { type ChatAdapter } from './adapter.js';
import { type ChannelCall } from './channel-client.js';
import { chatAdapterFor } from './adapters.js';

// A chat completion to one channel, in its provider's format, and its answer read back in
// OpenAI's: what the admin's channel test and the router's probes both send
// (docs/providers.md, "Sending to a channel").

export interface ChannelChatTarget {
  provider: ChannelProvider;
  baseUrl: string;
  /** The upstream key, unsealed. */
  secret: string;
  settings: ProviderSettings;
  /** The model name sent upstream (the channel's mapping applied). */
  upstreamModel: string;
}

export interface ChannelChat {
  /** The call, ready for `ChannelClient.send`. */
  call: ChannelCall;
  /** The upstream's answer in OpenAI's format (as sent when it is not the provider's JSON). */
  toOpenAI(status: number, body: Buffer): Buffer;
  /** The status as the router's health rules read it (some providers say more in the body). */
  healthStatus(status: number, body: Buffer): number;
}

/**
 * An OpenAI chat-completion body sent to the target: as it is to an `openai` channel (its
 * model replaced by the upstream's), converted by the provider's adapter to any other.
 * Throws the adapter lookup's `GatewayError` for a provider no adapter converts for yet.
 */
export function chatRequestFor(
  target: ChannelChatTarget,
  body: Record<string, unknown>,
  stream: boolean,
): ChannelChat {
  const adapter = chatAdapterFor(target.provider);
  if (!adapter) {
    return {
      call: {
        baseUrl: target.baseUrl,
        path: '/chat/completions',
        secret: target.secret,
        body: JSON.stringify({ ...body, model: target.upstreamModel }),
      },
      toOpenAI: (_status, answer) => answer,
      healthStatus: (status) => status,
    };
  }
  const outbound = adapter.chatRequest(
    {
      body,
      upstreamModel: target.upstreamModel,
      secret: target.secret,
      settings: target.settings,
    },
    stream,
  );
  // Bound: the call is used apart from `outbound`, and a signer may read its state through `this`.
  const sign = outbound.sign?.bind(outbound);
  return {
    call: {
      baseUrl: target.baseUrl,
      path: outbound.path,
      providerPath: true,
      secret: target.secret,
      headers: outbound.headers,
      ...(sign ? { sign } : {}),
      body: outbound.body,
    },
    toOpenAI: (status, answer) => convertedAnswer(adapter, target, status, answer),
    healthStatus: (status, answer) => adapter.healthStatus(status, answer),
  };
}

/**
 * The smallest chat request that shows a channel answers: one user message, `ping`, and
 * at most `maxTokens` tokens back. `model` is the name the channel is asked for (its
 * mapping gives `target.upstreamModel`).
 */
export function chatPing(target: ChannelChatTarget, model: string, maxTokens: number): ChannelChat {
  return chatRequestFor(
    target,
    { model, messages: [{ role: 'user', content: 'ping' }], max_tokens: maxTokens },
    false,
  );
}

function convertedAnswer(
  adapter: ChatAdapter,
  target: ChannelChatTarget,
  status: number,
  answer: Buffer,
): Buffer {
  try {
    return (
      status < 300
        ? adapter.chatAnswer(answer, {
            model: target.upstreamModel,
            includeUsage: false,
            created: 0,
          })
        : adapter.error(status, answer)
    ).body;
  } catch {
    // Not the provider's JSON: reported as the upstream sent it.
    return answer;
  }
}
