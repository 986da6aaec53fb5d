import { type components } from '../generated/chat-api.js';

// The chat API as the web app uses it: the shapes are the API's own (generated from its
// OpenAPI document), so a DTO change that breaks a page fails the type check.

export type Schemas = components['schemas'];

export type Role = Schemas['UserProfileResponse']['role'];
export type Purpose = Schemas['ModelResponse']['purpose'];
export type Platform = Schemas['ModelResponse']['platform'];
export const PURPOSES: readonly Purpose[] = ['chat', 'drawing', 'music'];

export type Me = Schemas['UserProfileResponse'];

export interface ChatModel {
  id: string;
  name: string;
  purpose: Purpose;
  platform: string;
  /** The model's context window in tokens, when the administrator gave it. */
  contextTokens?: number | null;
  /** The model reads images: the composer offers to attach them. */
  vision?: boolean;
  /** The price in credits (docs/credits.md, "Prices"); all zero: free. */
  creditsPerCall?: number;
  creditsPer1kInput?: number;
  creditsPer1kOutput?: number;
  /** Added here from a custom assistant's link. */
  custom?: boolean;
}

/** What the user chose, kept on the server. */
export type Preferences = Schemas['PreferencesResponse'];

export type Conversation = Schemas['ConversationResponse'];

export type Usage = Schemas['TokenUsage'];

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

export type McpServerChoice = Schemas['AvailableMcpServerResponse'];

/** An image the user attached to a question (docs/specification.md, "Images"). */
export type Attachment = Schemas['AttachmentResponse'];
export type AttachmentLimits = Schemas['AttachmentLimitsResponse'];

export interface ChatMessage {
  id?: number;
  role: Schemas['MessageResponse']['role'];
  content: string;
  images: string[];
  /** The user's own images, read with the session (not URLs a page can load alone). */
  attachments?: Attachment[];
  toolSteps?: ToolStep[];
  model?: string;
  usage?: Usage;
}

export type ApiKeyRecord = Schemas['ApiKeyResponse'];
export type ApiKeyInput = Schemas['CreateApiKeyDto'];
export type ApiKeyChanges = Schemas['UpdateApiKeyDto'];

/** One of the user's A2A keys; the key itself is only in the answer that created it. */
export type A2aKey = Schemas['A2aKeyResponse'];

export type AdminModel = Schemas['ModelResponse'];
export type AdminModelInput = Schemas['CreateModelDto'];
export type AdminModelChanges = Schemas['UpdateModelDto'];

export type ChatUser = Schemas['AdminUserResponse'];
export type ChatUserChanges = Schemas['UpdateUserDto'];

export interface Page<T> {
  items: T[];
  total: number;
}

export type Edition = Schemas['EditionResponse'];

/** An answer shown field by field (the edition, the usage totals). */
export type Details = Record<string, unknown>;

export type UsageTotals = Schemas['UsageResponse'];
export type UsageDay = Schemas['UsageDayResponse'];
export type UsagePeriod = Schemas['UsageDaysResponse'];
export type ModelUsage = Schemas['UsageModelResponse'];
export type AdminUsageDay = Schemas['AdminUsageDayResponse'];
export type AdminUsage = Schemas['AdminUsageResponse'];

// Chat credits (docs/credits.md).
export type CreditEntry = Schemas['CreditEntryResponse'];
export type CreditKind = CreditEntry['kind'];
export const CREDIT_KINDS: readonly CreditKind[] = [
  'grant',
  'spend',
  'refund',
  'redeem',
  'invite',
  'plan',
  'adjust',
];
export type Ledger = Schemas['LedgerPageResponse'];
export type CodeBatch = Schemas['CodeBatchResponse'];
export type NewCodes = Schemas['CreateCodesDto'];
export type CreatedCodes = Schemas['CreatedCodesResponse'];
export type Adjustment = Schemas['AdjustCreditsDto'];
export type CreditDay = Schemas['CreditDayResponse'];
export type CreditModelSpend = Schemas['CreditModelSpendResponse'];
export type CreditOverview = Schemas['CreditOverviewResponse'];
export type CreditSpend = Schemas['CreditSpendResponse'];
export type Plan = Schemas['PlanResponse'];
export type NewPlan = Schemas['CreatePlanDto'];
export type PlanChanges = Schemas['UpdatePlanDto'];
export type Subscription = Schemas['SubscriptionResponse'];
export type ChatSettings = Schemas['ChatSettingsResponse'];
export type Invite = Schemas['InviteResponse'];
export type ChatSettingsChanges = Schemas['UpdateChatSettingsDto'];
