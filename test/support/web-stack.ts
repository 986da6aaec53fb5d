import { query } from '@switchyard/testing';
import { chromium, type Browser } from 'playwright-core';
import { DESCRIPTION_VARIABLE, type WebStack } from './web-stack.setup.js';

// The browser suites' side of the run's one chat stack (web-stack.setup.ts). Suites run one
// after another (the package's test script runs Jest in band), and each begins on an emptied
// chat, so none depends on which ran before it and each passes alone.

export { UPSTREAM_KEYS, type WebStack } from './web-stack.setup.js';

/**
 * The run's web stack, emptied of what earlier suites left: no users but the administrator,
 * no models, API keys, MCP servers, agents or conversations, and the mock as it started.
 */
export async function webStackForSuite(): Promise<WebStack> {
  const description = process.env[DESCRIPTION_VARIABLE];
  if (!description) {
    throw new Error(
      `${DESCRIPTION_VARIABLE} is not set: the web suites run in the web project of test/jest.config.mjs, whose globalSetup starts the stack`,
    );
  }
  const stack = JSON.parse(description) as WebStack;
  // Emptied, not shared: a model open to all is in every suite's picker (which preselects
  // the first chat model), the API keys of a purpose take turns, and model names are unique.
  // The first administrator stays: the chat makes one only as it starts, and only if none.
  await query(
    stack.databaseUrl,
    `TRUNCATE "Conversation", "Message", "Attachment", "AttachmentBlob", "ChatUsageDay",
              "ChatModelUsageDay", "A2aKey", "A2aTask", "A2aAgent", "ChatModel", "McpServer",
              "ApiKeyRecord"`,
  );
  await query(stack.databaseUrl, `DELETE FROM "ChatUser" WHERE role <> 'admin'`);
  await query(
    stack.databaseUrl,
    `UPDATE "ChatUser" SET "modelPermissions" = '{}', "preferredModel" = NULL,
            "customAssistants" = '{}', "requestCount" = 0, "promptTokens" = 0,
            "completionTokens" = 0`,
  );
  const reset = await fetch(`${stack.mock.url}/_mock/reset`, { method: 'POST' });
  if (!reset.ok) throw new Error(`resetting the mock provider: ${reset.status}`);
  return stack;
}

/**
 * The stack's Chromium. `close` closes only the contexts the suite made; the browser stays
 * for the next suite.
 */
export function connectChromium(stack: WebStack): Promise<Browser> {
  return chromium.connectOverCDP(stack.chromium);
}
