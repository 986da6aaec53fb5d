import type { ReportedUsage } from '@switchyard/contracts';

/** OpenAI's usage object as an answer or a stream's last chunk carries it. */
export interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/**
 * OpenAI's usage object. `reasoningTokens` (already part of the completion tokens) is
 * reported when the provider counts thinking apart.
 */
export function openAIUsage(usage: ReportedUsage, reasoningTokens = 0): Record<string, unknown> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
    ...(reasoningTokens > 0
      ? { completion_tokens_details: { reasoning_tokens: reasoningTokens } }
      : {}),
  };
}
