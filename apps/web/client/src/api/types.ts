// The chat API as the web app uses it (docs/specification.md, "Endpoints" and "Lists").
// Shapes the contract leaves open are read leniently by the functions in chat-api.ts.

export type Role = 'user' | 'admin';
export type Purpose = 'chat' | 'drawing' | 'music';
export const PURPOSES: readonly Purpose[] = ['chat', 'drawing', 'music'];

export type Id = number | string;

export interface Me {
  id: Id;
  username: string;
  role: Role;
}

export interface ChatModel {
  id: Id;
  name: string;
  purpose: Purpose;
  platform: string;
  /** Added here from a custom assistant's link. */
  custom?: boolean;
}

/** What the user chose, kept on the server. */
export interface Preferences {
  model: string | null;
  /** Model names of custom assistants the user added from links. */
  customAssistants: string[];
}

export interface Conversation {
  id: Id;
  title: string;
  model: string;
  /** MCP servers enabled in the conversation. */
  mcpServerIds?: Id[];
  updatedAt?: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/** One tool call of a reply (docs/tools.md). */
export interface ToolStep {
  id: string;
  /** `delegate`: a task handed to a remote A2A agent (docs/tools.md). */
  kind: 'tool' | 'resource' | 'connect' | 'delegate';
  server: string;
  tool?: string;
  uri?: string;
  arguments?: unknown;
  ok: boolean;
  result?: string;
  error?: { code: string; message: string };
  durationMs: number;
}

export interface McpServerChoice {
  id: Id;
  name: string;
}

export interface ChatMessage {
  id?: Id;
  role: 'user' | 'assistant' | 'system';
  content: string;
  images: string[];
  toolSteps?: ToolStep[];
  model?: string;
  usage?: Usage;
}

/** One of the user's A2A keys; the key itself is only in the answer that created it. */
export interface A2aKey {
  id: Id;
  name: string;
  lastFour: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: Id;
  platform: string;
  address: string;
  /** True (or the base address) when a pre-v4.1.1 full endpoint address was shortened. */
  addressNormalized?: boolean | string;
  keyLastFour: string;
  purpose: Purpose;
  enabled: boolean;
}

export interface ApiKeyInput {
  platform: 'openai';
  address: string;
  key?: string;
  purpose: Purpose;
  enabled: boolean;
}

export interface AdminModel {
  id: Id;
  platform: string;
  name: string;
  purpose: Purpose;
  open: boolean;
}

export type AdminModelInput = Omit<AdminModel, 'id'>;

export interface ChatUser {
  id: Id;
  username: string;
  email?: string | null;
  role: Role;
  disabled: boolean;
  modelPermissions: string[];
}

export interface Page<T> {
  items: T[];
  total: number;
}

/** Whatever /api/admin/edition and /api/usage answer: shown field by field. */
export type Details = Record<string, unknown>;
