import { asProblem, problemFrom, type Problem } from '@switchyard/ui/client';
import { client } from './client.js';
import { readEvents } from './sse.js';
import {
  type A2aKey,
  type Attachment,
  type AttachmentLimits,
  type AdminModel,
  type AdminModelChanges,
  type AdminModelInput,
  type AdminUsage,
  type ApiKeyChanges,
  type ApiKeyInput,
  type ApiKeyRecord,
  type ChatMessage,
  type ChatModel,
  type ChatUser,
  type ChatUserChanges,
  type CodeBatch,
  type Conversation,
  type CreatedCodes,
  type CreditEntry,
  type CreditKind,
  type CreditOverview,
  type CreditSpend,
  type NewPlan,
  type Plan,
  type PlanChanges,
  type Subscription,
  type Adjustment,
  type ChatSettings,
  type Invite,
  type ChatSettingsChanges,
  type Ledger,
  type NewCodes,
  type Edition,
  type McpServerChoice,
  type Me,
  type Page,
  type Preferences,
  type Schemas,
  type ToolStep,
  type Usage,
  type UsagePeriod,
  type UsageTotals,
} from './types.js';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown, fallback = ''): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : fallback;
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

export function readToolStep(value: unknown): ToolStep | null {
  if (!isRecord(value) || typeof value['server'] !== 'string') return null;
  const kind = value['kind'];
  const error = isRecord(value['error'])
    ? { code: text(value['error']['code']), message: text(value['error']['message']) }
    : undefined;
  return {
    id: text(value['id']),
    kind: kind === 'resource' || kind === 'connect' || kind === 'delegate' ? kind : 'tool',
    server: value['server'],
    ...(typeof value['tool'] === 'string' ? { tool: value['tool'] } : {}),
    ...(typeof value['uri'] === 'string' ? { uri: value['uri'] } : {}),
    ...('arguments' in value ? { arguments: value['arguments'] } : {}),
    ok: value['ok'] === true,
    ...(typeof value['result'] === 'string' ? { result: value['result'] } : {}),
    ...(error ? { error } : {}),
    durationMs: typeof value['durationMs'] === 'number' ? value['durationMs'] : 0,
  };
}

function readUsage(value: unknown): Usage | undefined {
  if (!isRecord(value)) return undefined;
  return {
    promptTokens: Number(value['promptTokens'] ?? 0),
    completionTokens: Number(value['completionTokens'] ?? 0),
  };
}

const IMAGE_URL = /^(https?:|data:image\/)/i;

/** Image results may be stored under a few names; any http(s) or data: URL is kept. */
export function imagesOf(value: Json): string[] {
  const found = [
    ...strings(value['images']),
    ...strings(value['imageUrls']),
    ...strings(value['urls']),
    ...(Array.isArray(value['images'])
      ? value['images'].filter(isRecord).map((image) => text(image['url']))
      : []),
  ];
  return found.filter((url) => IMAGE_URL.test(url));
}

export function readMessage(value: unknown): ChatMessage | null {
  if (!isRecord(value)) return null;
  const role = value['role'];
  if (role !== 'user' && role !== 'assistant' && role !== 'system') return null;
  const usage = readUsage(value['usage']);
  return {
    ...(typeof value['id'] === 'number' ? { id: value['id'] } : {}),
    role,
    content: text(value['content']),
    images: imagesOf(value),
    ...(Array.isArray(value['toolSteps'])
      ? {
          toolSteps: (value['toolSteps'] as unknown[])
            .map(readToolStep)
            .filter((step): step is ToolStep => step !== null),
        }
      : {}),
    ...(typeof value['model'] === 'string' ? { model: value['model'] } : {}),
    ...(usage ? { usage } : {}),
  };
}

/** A stored message as the pages show it. */
function fromMessage(message: Schemas['MessageResponse']): ChatMessage {
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    images: message.imageUrls.filter((url) => IMAGE_URL.test(url)),
    toolSteps: message.toolSteps
      .map(readToolStep)
      .filter((step): step is ToolStep => step !== null),
    ...(message.model ? { model: message.model } : {}),
    ...(message.attachments.length > 0 ? { attachments: message.attachments } : {}),
    usage: message.usage,
  };
}

// Users and sessions.

export async function login(username: string, password: string): Promise<string> {
  const session = await client.call(
    client.api.POST('/api/auth/login', { body: { username, password } }),
  );
  return session.token;
}

export async function register(
  username: string,
  password: string,
  email?: string,
  invite?: string,
): Promise<void> {
  await client.call(
    client.api.POST('/api/auth/register', {
      body: { username, password, ...(email ? { email } : {}), ...(invite ? { invite } : {}) },
    }),
  );
}

export const logout = () => client.call(client.api.POST('/api/auth/logout'));

export const me = (): Promise<Me> => client.call(client.api.GET('/api/auth/me'));

// Models and conversations.

export async function listModels(): Promise<ChatModel[]> {
  const models = await client.call(client.api.GET('/api/models'));
  return models.items.map((model) => ({ id: model.name, ...model }));
}

export const preferences = (): Promise<Preferences> =>
  client.call(client.api.GET('/api/me/preferences'));

/** Remembers the user's model choice on the server, for all their devices. */
export const chooseModel = (model: string): Promise<Preferences> =>
  client.call(client.api.PATCH('/api/me/preferences', { body: { model } }));

/** Saves the custom assistant of a public link to the user; it becomes the chosen model. */
export const addCustomAssistant = (link: string): Promise<Preferences> =>
  client.call(client.api.POST('/api/me/custom-assistants', { body: { link } }));

export async function listConversations(): Promise<Conversation[]> {
  return (await client.call(client.api.GET('/api/conversations'))).items;
}

export const createConversation = (
  title: string,
  model: string,
  mcpServerIds: number[] = [],
): Promise<Conversation> =>
  client.call(client.api.POST('/api/conversations', { body: { title, model, mcpServerIds } }));

export async function renameConversation(conversation: string, title: string): Promise<void> {
  await client.call(
    client.api.PATCH('/api/conversations/{id}', {
      params: { path: { id: conversation } },
      body: { title },
    }),
  );
}

export async function setConversationServers(
  conversation: string,
  mcpServerIds: number[],
): Promise<void> {
  await client.call(
    client.api.PATCH('/api/conversations/{id}', {
      params: { path: { id: conversation } },
      body: { mcpServerIds },
    }),
  );
}

/** The MCP servers a user may enable in a conversation. */
export async function listMcpServers(): Promise<McpServerChoice[]> {
  return (await client.call(client.api.GET('/api/mcp-servers'))).items;
}

export async function deleteConversation(conversation: string): Promise<void> {
  await client.call(
    client.api.DELETE('/api/conversations/{id}', { params: { path: { id: conversation } } }),
  );
}

/** The largest page of messages the chat API serves. */
const MESSAGE_PAGE_SIZE = 200;
/** How many messages a conversation opens with, and how many more each look back adds. */
export const MESSAGES_SHOWN_PER_PAGE = 50;

/**
 * The latest page of a conversation, or the page just before message `before` (what is
 * already shown), oldest first; `older` is how many messages lie before the page.
 */
export async function latestMessages(
  conversation: string,
  before?: number,
): Promise<{ messages: ChatMessage[]; older: number }> {
  const { items, total } = await client.call(
    client.api.GET('/api/conversations/{id}/messages', {
      params: {
        path: { id: conversation },
        query: {
          start: 'latest',
          pageSize: MESSAGES_SHOWN_PER_PAGE,
          ...(before !== undefined ? { before } : {}),
        },
      },
    }),
  );
  return { messages: items.map(fromMessage), older: Math.max(0, total - items.length) };
}

/** The whole conversation, oldest first, read page by page (for its export). */
export async function listMessages(conversation: string): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [];
  for (let page = 1; ; page += 1) {
    const { items, total } = await client.call(
      client.api.GET('/api/conversations/{id}/messages', {
        params: { path: { id: conversation }, query: { page, pageSize: MESSAGE_PAGE_SIZE } },
      }),
    );
    messages.push(...items.map(fromMessage));
    if (items.length === 0 || page * MESSAGE_PAGE_SIZE >= total) return messages;
  }
}

/** Deletes `from` and every later message: regenerate, or edit and resend. */
export async function deleteMessagesFrom(conversation: string, from: number): Promise<void> {
  await client.call(
    client.api.DELETE('/api/conversations/{id}/messages', {
      params: { path: { id: conversation }, query: { from } },
    }),
  );
}

// Images attached to questions (docs/specification.md, "Images").

export const attachmentLimits = (): Promise<AttachmentLimits> =>
  client.call(client.api.GET('/api/attachments/limits'));

/** Uploads one image for the next message; its bytes go as they are, typed by the file. */
export async function uploadImage(file: Blob): Promise<Attachment> {
  const response = await client.send('/api/attachments', {
    method: 'POST',
    headers: { ...client.headers(false), 'content-type': file.type || 'application/octet-stream' },
    body: file,
  });
  return (await response.json()) as Attachment;
}

/** An attached image's bytes: its URL needs the session, so an <img> cannot load it alone. */
export async function readAttachment(attachment: Attachment): Promise<Blob> {
  const response = await client.send(`/api${attachment.url.replace(/^\/api/, '')}`, {
    headers: client.headers(false, attachment.mediaType),
  });
  return response.blob();
}

export interface ReplyHandlers {
  delta(content: string): void;
  images(urls: string[]): void;
  /** A tool step finished (its call, result or error, and duration). */
  toolStep?(step: ToolStep): void;
  /** Tools were offered; their definitions cost about this many prompt tokens a call. */
  toolDefinitions?(tokens: number): void;
  done(messageId: number | undefined, usage: Usage | undefined): void;
  error(problem: Problem): void;
}

/**
 * Sends a message and reads the streamed reply event by event. Errors before the stream
 * (JSON bodies) and during it (`event: error`) both end in `handlers.error`.
 */
export async function sendMessage(
  conversation: string,
  body: { content: string; model?: string; attachmentIds?: string[] },
  handlers: ReplyHandlers,
  signal: AbortSignal,
): Promise<void> {
  let response: Response;
  try {
    response = await client.send(
      `/api/conversations/${encodeURIComponent(conversation)}/messages`,
      {
        method: 'POST',
        headers: client.headers(true, 'text/event-stream, application/json'),
        body: JSON.stringify(body),
        signal,
      },
    );
  } catch (failure) {
    const problem = asProblem(failure);
    // Stopping the reply is not a failure; an answer that came before it still is.
    if (signal.aborted && problem.code === 'network_error') return;
    handlers.error(problem);
    return;
  }
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream') || !response.body) {
    // A reply that was not streamed: read it as a message.
    const message = readMessage(await response.json().catch(() => null));
    if (message) {
      handlers.delta(message.content);
      if (message.images.length > 0) handlers.images(message.images);
    }
    handlers.done(message?.id, message?.usage);
    return;
  }
  let finished = false;
  try {
    for await (const event of readEvents(response.body)) {
      let data: unknown = null;
      try {
        data = JSON.parse(event.data);
      } catch {
        data = null;
      }
      const fields = isRecord(data) ? data : {};
      if (event.event === 'delta') handlers.delta(text(fields['content']));
      else if (event.event === 'image') handlers.images(imagesOf(fields));
      else if (event.event === 'tools') {
        const tokens = fields['definitionTokens'];
        if (typeof tokens === 'number') handlers.toolDefinitions?.(tokens);
      } else if (event.event === 'tool_result') {
        const step = readToolStep(data);
        if (step) handlers.toolStep?.(step);
      } else if (event.event === 'done') {
        finished = true;
        const messageId = fields['messageId'];
        handlers.done(
          typeof messageId === 'number' ? messageId : undefined,
          readUsage(fields['usage']),
        );
      } else if (event.event === 'error') {
        finished = true;
        handlers.error(problemFrom(502, data, 'The reply failed'));
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    handlers.error(client.unreachable(error));
    return;
  }
  if (!finished && !signal.aborted) {
    handlers.error(
      problemFrom(
        502,
        { code: 'stream_interrupted', message: 'The reply stopped before it was complete' },
        '',
      ),
    );
  }
}

export const usage = (): Promise<UsageTotals> => client.call(client.api.GET('/api/usage'));

/** The user's usage on each of the last `days` UTC days, oldest first, and per model. */
export const usageDaily = (days: number): Promise<UsagePeriod> =>
  client.call(client.api.GET('/api/usage/daily', { params: { query: { days } } }));

/** Every user's usage on each of the last `days` UTC days and the top models. */
export const adminUsage = (days: number): Promise<AdminUsage> =>
  client.call(client.api.GET('/api/admin/usage', { params: { query: { days } } }));

/** Credits granted and spent on each of the last `days` UTC days, and spent per model. */
export const adminCreditOverview = (days: number): Promise<CreditOverview> =>
  client.call(client.api.GET('/api/admin/credits/overview', { params: { query: { days } } }));

// A2A keys (docs/tools.md, A2A).

export const listA2aKeys = (): Promise<Page<A2aKey>> =>
  client.call(client.api.GET('/api/me/a2a-keys'));

/** The new key's record and the key itself, which is never shown again. */
export async function createA2aKey(name: string): Promise<{ record: A2aKey; key: string }> {
  const { key, ...record } = await client.call(
    client.api.POST('/api/me/a2a-keys', { body: { name } }),
  );
  return { record, key };
}

export async function revokeA2aKey(key: number): Promise<void> {
  await client.call(
    client.api.POST('/api/me/a2a-keys/{id}/revoke', { params: { path: { id: key } } }),
  );
}

// Administration.

export const listApiKeys = (): Promise<Page<ApiKeyRecord>> =>
  client.call(client.api.GET('/api/admin/api-keys'));

export async function createApiKey(input: ApiKeyInput): Promise<void> {
  await client.call(client.api.POST('/api/admin/api-keys', { body: input }));
}

export async function updateApiKey(key: number, changes: ApiKeyChanges): Promise<void> {
  await client.call(
    client.api.PATCH('/api/admin/api-keys/{id}', { params: { path: { id: key } }, body: changes }),
  );
}

export async function deleteApiKey(key: number): Promise<void> {
  await client.call(
    client.api.DELETE('/api/admin/api-keys/{id}', { params: { path: { id: key } } }),
  );
}

export const listAdminModels = (): Promise<Page<AdminModel>> =>
  client.call(client.api.GET('/api/admin/models'));

export async function createModel(input: AdminModelInput): Promise<void> {
  await client.call(client.api.POST('/api/admin/models', { body: input }));
}

export async function updateModel(model: number, changes: AdminModelChanges): Promise<void> {
  await client.call(
    client.api.PATCH('/api/admin/models/{id}', { params: { path: { id: model } }, body: changes }),
  );
}

export async function deleteModel(model: number): Promise<void> {
  await client.call(
    client.api.DELETE('/api/admin/models/{id}', { params: { path: { id: model } } }),
  );
}

export const listUsers = (
  search: string,
  page: number,
  pageSize: number,
): Promise<Page<ChatUser>> =>
  client.call(
    client.api.GET('/api/admin/users', { params: { query: { search, page, pageSize } } }),
  );

export async function updateUser(user: number, changes: ChatUserChanges): Promise<void> {
  await client.call(
    client.api.PATCH('/api/admin/users/{id}', { params: { path: { id: user } }, body: changes }),
  );
}

export const edition = (): Promise<Edition> => client.call(client.api.GET('/api/admin/edition'));

export const activateLicense = (license: string): Promise<Edition> =>
  client.call(client.api.POST('/api/admin/edition/activate', { body: { license } }));

// Credits (docs/credits.md).

export const balance = async (): Promise<number> =>
  (await client.call(client.api.GET('/api/credits'))).balance;

export const ledger = (page: number, pageSize: number, kind?: CreditKind): Promise<Ledger> =>
  client.call(
    client.api.GET('/api/credits/ledger', {
      params: { query: { page, pageSize, ...(kind ? { kind } : {}) } },
    }),
  );

/** The user's invite link (docs/credits.md, "Invitations"). */
export const invite = (): Promise<Invite> => client.call(client.api.GET('/api/credits/invite'));

export const redeem = (code: string): Promise<{ credits: number; balance: number }> =>
  client.call(client.api.POST('/api/credits/redeem', { body: { code } }));

export const userLedger = (
  user: number,
  page: number,
  pageSize: number,
  kind?: CreditKind,
): Promise<Ledger> =>
  client.call(
    client.api.GET('/api/admin/users/{id}/credits', {
      params: { path: { id: user }, query: { page, pageSize, ...(kind ? { kind } : {}) } },
    }),
  );

export const adjustCredits = (user: number, adjustment: Adjustment): Promise<CreditEntry> =>
  client.call(
    client.api.POST('/api/admin/users/{id}/credits', {
      params: { path: { id: user } },
      body: adjustment,
    }),
  );

export const listCodeBatches = (page: number, pageSize: number): Promise<Page<CodeBatch>> =>
  client.call(client.api.GET('/api/admin/credit-codes', { params: { query: { page, pageSize } } }));

export const createCodes = (batch: NewCodes): Promise<CreatedCodes> =>
  client.call(client.api.POST('/api/admin/credit-codes', { body: batch }));

// Plans (docs/credits.md, "Plans").

export const listPlans = (): Promise<{ items: Plan[]; total: number }> =>
  client.call(client.api.GET('/api/admin/credit-plans'));

export const createPlan = (plan: NewPlan): Promise<Plan> =>
  client.call(client.api.POST('/api/admin/credit-plans', { body: plan }));

export const updatePlan = (id: number, changes: PlanChanges): Promise<Plan> =>
  client.call(
    client.api.PATCH('/api/admin/credit-plans/{id}', { params: { path: { id } }, body: changes }),
  );

export const userPlan = (user: number): Promise<Subscription> =>
  client.call(
    client.api.GET('/api/admin/users/{id}/credit-plan', { params: { path: { id: user } } }),
  );

/** Puts the user on the plan (topped up at once for this period), or off any (`null`). */
export const assignPlan = (user: number, planId: number | null): Promise<Subscription> =>
  client.call(
    client.api.PUT('/api/admin/users/{id}/credit-plan', {
      params: { path: { id: user } },
      body: { planId },
    }),
  );

/** The user's own credits spent per model over the last `days` UTC days. */
export const creditSpend = (days: number): Promise<CreditSpend> =>
  client.call(client.api.GET('/api/credits/spend', { params: { query: { days } } }));

// Chat settings (docs/credits.md, "Settings").

export const chatSettings = (): Promise<ChatSettings> =>
  client.call(client.api.GET('/api/admin/chat-settings'));

export const saveChatSettings = (changes: ChatSettingsChanges): Promise<ChatSettings> =>
  client.call(client.api.PUT('/api/admin/chat-settings', { body: changes }));

/** Tells the header's balance that a reply, a redemption or an adjustment changed it. */
export const CREDITS_CHANGED = 'switchyard:credits-changed';
export const creditsChanged = (): void => {
  window.dispatchEvent(new Event(CREDITS_CHANGED));
};
