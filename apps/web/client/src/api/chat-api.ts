import {
  apiUrl,
  call,
  failure,
  headers,
  networkProblem,
  problemFrom,
  type ApiProblem,
} from './http.js';
import { readEvents } from './sse.js';
import {
  PURPOSES,
  type A2aKey,
  type AdminModel,
  type AdminModelInput,
  type ApiKeyInput,
  type ApiKeyRecord,
  type ChatMessage,
  type ChatModel,
  type ChatUser,
  type Conversation,
  type Details,
  type Id,
  type McpServerChoice,
  type Me,
  type Page,
  type Preferences,
  type Purpose,
  type ToolStep,
  type Usage,
} from './types.js';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every list of the chat API answers `{items, total}`; items that cannot be read are left out. */
export function pageOf<T>(answer: unknown, read: (item: unknown) => T | null): Page<T> {
  if (!isRecord(answer) || !Array.isArray(answer['items'])) return { items: [], total: 0 };
  const items = answer['items'].map(read).filter((item): item is T => item !== null);
  const total = typeof answer['total'] === 'number' ? answer['total'] : items.length;
  return { items, total };
}

const text = (value: unknown, fallback = ''): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : fallback;
const id = (value: unknown): Id => (typeof value === 'number' ? value : text(value));
const purpose = (value: unknown): Purpose =>
  PURPOSES.includes(value as Purpose) ? (value as Purpose) : 'chat';
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

export function readModel(value: unknown): ChatModel | null {
  if (!isRecord(value) || typeof value['name'] !== 'string') return null;
  return {
    id: id(value['id'] ?? value['name']),
    name: value['name'],
    purpose: purpose(value['purpose']),
    platform: text(value['platform'], 'openai'),
  };
}

function readConversation(value: unknown): Conversation | null {
  if (!isRecord(value) || value['id'] === undefined) return null;
  return {
    id: id(value['id']),
    title: text(value['title'], 'Untitled'),
    model: text(value['model']),
    ...(Array.isArray(value['mcpServerIds'])
      ? { mcpServerIds: (value['mcpServerIds'] as unknown[]).map(id) }
      : {}),
    ...(typeof value['updatedAt'] === 'string' ? { updatedAt: value['updatedAt'] } : {}),
  };
}

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
  return found.filter((url) => /^(https?:|data:image\/)/i.test(url));
}

export function readMessage(value: unknown): ChatMessage | null {
  if (!isRecord(value)) return null;
  const role = value['role'];
  if (role !== 'user' && role !== 'assistant' && role !== 'system') return null;
  const usage = readUsage(value['usage']);
  return {
    ...(value['id'] !== undefined ? { id: id(value['id']) } : {}),
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

function readA2aKey(value: unknown): A2aKey | null {
  if (!isRecord(value) || value['id'] === undefined) return null;
  const when = (field: string) => (typeof value[field] === 'string' ? value[field] : null);
  return {
    id: id(value['id']),
    name: text(value['name']),
    lastFour: text(value['lastFour']),
    lastUsedAt: when('lastUsedAt'),
    revokedAt: when('revokedAt'),
    createdAt: text(value['createdAt']),
  };
}

function readApiKey(value: unknown): ApiKeyRecord | null {
  if (!isRecord(value) || value['id'] === undefined) return null;
  const normalized = value['addressNormalized'];
  return {
    id: id(value['id']),
    platform: text(value['platform'], 'openai'),
    address: text(value['address']),
    ...(typeof normalized === 'boolean' || typeof normalized === 'string'
      ? { addressNormalized: normalized }
      : {}),
    keyLastFour: text(value['keyLastFour']),
    purpose: purpose(value['purpose']),
    enabled: value['enabled'] === true,
  };
}

function readAdminModel(value: unknown): AdminModel | null {
  const model = readModel(value);
  if (!model || !isRecord(value)) return null;
  return { ...model, open: value['open'] === true };
}

function readUser(value: unknown): ChatUser | null {
  if (!isRecord(value) || value['id'] === undefined) return null;
  return {
    id: id(value['id']),
    username: text(value['username']),
    email: typeof value['email'] === 'string' ? value['email'] : null,
    role: value['role'] === 'admin' ? 'admin' : 'user',
    disabled: value['disabled'] === true,
    modelPermissions: strings(value['modelPermissions']),
  };
}

const details = (answer: unknown): Details => (isRecord(answer) ? answer : {});
const path = (value: Id) => encodeURIComponent(String(value));

// Users and sessions.

export async function login(username: string, password: string): Promise<string> {
  const answer = await call<unknown>('POST', '/auth/login', { username, password });
  const token = isRecord(answer) ? answer['token'] : undefined;
  if (typeof token !== 'string') throw new Error('The login answer carried no token');
  return token;
}

export async function register(username: string, password: string, email?: string): Promise<void> {
  await call('POST', '/auth/register', { username, password, ...(email ? { email } : {}) });
}

export const logout = () => call<void>('POST', '/auth/logout');

export async function me(): Promise<Me> {
  const answer = details(await call<unknown>('GET', '/auth/me'));
  return {
    id: id(answer['id']),
    username: text(answer['username']),
    role: answer['role'] === 'admin' ? 'admin' : 'user',
  };
}

// Models and conversations.

export async function listModels(): Promise<ChatModel[]> {
  return pageOf(await call<unknown>('GET', '/models'), readModel).items;
}

export function readPreferences(answer: unknown): Preferences {
  const value = details(answer);
  return {
    model: typeof value['model'] === 'string' ? value['model'] : null,
    customAssistants: strings(value['customAssistants']),
  };
}

export async function preferences(): Promise<Preferences> {
  return readPreferences(await call<unknown>('GET', '/me/preferences'));
}

/** Remembers the user's model choice on the server, for all their devices. */
export async function chooseModel(model: string): Promise<Preferences> {
  return readPreferences(await call<unknown>('PATCH', '/me/preferences', { model }));
}

/** Saves the custom assistant of a public link to the user; it becomes the chosen model. */
export async function addCustomAssistant(link: string): Promise<Preferences> {
  return readPreferences(await call<unknown>('POST', '/me/custom-assistants', { link }));
}

export async function listConversations(): Promise<Conversation[]> {
  return pageOf(await call<unknown>('GET', '/conversations'), readConversation).items;
}

export async function createConversation(
  title: string,
  model: string,
  mcpServerIds: Id[] = [],
): Promise<Conversation> {
  const created = readConversation(
    await call<unknown>('POST', '/conversations', { title, model, mcpServerIds }),
  );
  if (!created) throw new Error('The new conversation has no id');
  return created;
}

export async function renameConversation(conversation: Id, title: string): Promise<void> {
  await call('PATCH', `/conversations/${path(conversation)}`, { title });
}

export async function setConversationServers(conversation: Id, mcpServerIds: Id[]): Promise<void> {
  await call('PATCH', `/conversations/${path(conversation)}`, { mcpServerIds });
}

/** The MCP servers a user may enable in a conversation. */
export async function listMcpServers(): Promise<McpServerChoice[]> {
  const readServer = (item: unknown): McpServerChoice | null =>
    isRecord(item) && item['id'] !== undefined
      ? { id: id(item['id']), name: text(item['name']) }
      : null;
  return pageOf(await call<unknown>('GET', '/mcp-servers'), readServer).items;
}

export async function deleteConversation(conversation: Id): Promise<void> {
  await call('DELETE', `/conversations/${path(conversation)}`);
}

/** The largest page of messages the chat API serves. */
const MESSAGE_PAGE_SIZE = 200;

/** The whole conversation, oldest first, read page by page. */
export async function listMessages(conversation: Id): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [];
  for (let page = 1; ; page += 1) {
    const query = new URLSearchParams({ page: String(page), pageSize: String(MESSAGE_PAGE_SIZE) });
    const answer = await call<unknown>(
      'GET',
      `/conversations/${path(conversation)}/messages?${query.toString()}`,
    );
    const { items, total } = pageOf(answer, readMessage);
    messages.push(...items);
    if (items.length === 0 || page * MESSAGE_PAGE_SIZE >= total) return messages;
  }
}

/** Deletes `from` and every later message: regenerate, or edit and resend. */
export async function deleteMessagesFrom(conversation: Id, from: Id): Promise<void> {
  await call(
    'DELETE',
    `/conversations/${path(conversation)}/messages?from=${encodeURIComponent(String(from))}`,
  );
}

export interface ReplyHandlers {
  delta(content: string): void;
  images(urls: string[]): void;
  /** A tool step finished (its call, result or error, and duration). */
  toolStep?(step: ToolStep): void;
  done(messageId: Id | undefined, usage: Usage | undefined): void;
  error(problem: ApiProblem): void;
}

/**
 * Sends a message and reads the streamed reply event by event. Errors before the stream
 * (JSON bodies) and during it (`event: error`) both end in `handlers.error`.
 */
export async function sendMessage(
  conversation: Id,
  body: { content: string; model?: string },
  handlers: ReplyHandlers,
  signal: AbortSignal,
): Promise<void> {
  let response: Response;
  try {
    response = await fetch(apiUrl(`/conversations/${path(conversation)}/messages`), {
      method: 'POST',
      headers: headers(true, 'text/event-stream, application/json'),
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (signal.aborted) return;
    handlers.error(networkProblem(error));
    return;
  }
  if (!response.ok) {
    handlers.error(await failure(response));
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
      const fields = details(data);
      if (event.event === 'delta') handlers.delta(text(fields['content']));
      else if (event.event === 'image') handlers.images(imagesOf(fields));
      else if (event.event === 'tool_result') {
        const step = readToolStep(data);
        if (step) handlers.toolStep?.(step);
      } else if (event.event === 'done') {
        finished = true;
        const messageId = fields['messageId'];
        handlers.done(
          messageId === undefined ? undefined : id(messageId),
          readUsage(fields['usage']),
        );
      } else if (event.event === 'error') {
        finished = true;
        handlers.error(problemFrom(502, data, 'The reply failed'));
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    handlers.error(networkProblem(error));
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

export async function usage(): Promise<Details> {
  return details(await call<unknown>('GET', '/usage'));
}

// A2A keys (docs/tools.md, A2A).

export async function listA2aKeys(): Promise<Page<A2aKey>> {
  return pageOf(await call<unknown>('GET', '/me/a2a-keys'), readA2aKey);
}

/** The new key's record and the key itself, which is never shown again. */
export async function createA2aKey(name: string): Promise<{ record: A2aKey; key: string }> {
  const answer = await call<unknown>('POST', '/me/a2a-keys', { name });
  const record = readA2aKey(answer);
  const key = isRecord(answer) ? answer['key'] : undefined;
  if (!record || typeof key !== 'string') throw new Error('The server answered without the key');
  return { record, key };
}

export async function revokeA2aKey(key: Id): Promise<void> {
  await call('POST', `/me/a2a-keys/${path(key)}/revoke`);
}

// Administration.

export async function listApiKeys(): Promise<Page<ApiKeyRecord>> {
  return pageOf(await call<unknown>('GET', '/admin/api-keys'), readApiKey);
}

export async function createApiKey(input: ApiKeyInput): Promise<void> {
  await call('POST', '/admin/api-keys', input);
}

export async function updateApiKey(key: Id, changes: Partial<ApiKeyInput>): Promise<void> {
  await call('PATCH', `/admin/api-keys/${path(key)}`, changes);
}

export async function deleteApiKey(key: Id): Promise<void> {
  await call('DELETE', `/admin/api-keys/${path(key)}`);
}

export async function listAdminModels(): Promise<Page<AdminModel>> {
  return pageOf(await call<unknown>('GET', '/admin/models'), readAdminModel);
}

export async function createModel(input: AdminModelInput): Promise<void> {
  await call('POST', '/admin/models', input);
}

export async function updateModel(model: Id, changes: Partial<AdminModelInput>): Promise<void> {
  await call('PATCH', `/admin/models/${path(model)}`, changes);
}

export async function deleteModel(model: Id): Promise<void> {
  await call('DELETE', `/admin/models/${path(model)}`);
}

export async function listUsers(
  search: string,
  page: number,
  pageSize: number,
): Promise<Page<ChatUser>> {
  const query = new URLSearchParams({ search, page: String(page), pageSize: String(pageSize) });
  return pageOf(await call<unknown>('GET', `/admin/users?${query.toString()}`), readUser);
}

export async function updateUser(
  user: Id,
  changes: { modelPermissions: string[]; disabled?: boolean },
): Promise<void> {
  await call('PATCH', `/admin/users/${path(user)}`, changes);
}

export async function edition(): Promise<Details> {
  return details(await call<unknown>('GET', '/admin/edition'));
}

export async function activateLicense(license: string): Promise<Details> {
  return details(await call<unknown>('POST', '/admin/edition/activate', { license }));
}
