import { type ShownMessage } from './MessageView.js';

// How full the model's context window is: what the next question would be sent with, the
// conversation so far and the tool definitions, against the size the administrator gave.
// Tokens are counted the way the chat service estimates the definitions' cost, about four
// characters a token (docs/tools.md): close enough for a warning, not for billing.

/** From this share of the window on, the conversation is near its end. */
export const NEAR_LIMIT = 0.8;

export interface ContextUse {
  tokens: number;
  limit: number;
  /** What the tool definitions of the last reply took of it. */
  toolDefinitionTokens: number;
}

export function contextUse(
  messages: ShownMessage[],
  limit: number | null | undefined,
): ContextUse | null {
  if (!limit) return null;
  const characters = messages.reduce((sum, message) => sum + message.content.length, 0);
  const lastTools = messages.findLast((m) => m.toolDefinitionTokens !== undefined);
  const toolDefinitionTokens = lastTools?.toolDefinitionTokens ?? 0;
  return { tokens: Math.ceil(characters / 4) + toolDefinitionTokens, limit, toolDefinitionTokens };
}

export function nearLimit(use: ContextUse | null): use is ContextUse {
  return use !== null && use.tokens >= use.limit * NEAR_LIMIT;
}
