// The OpenAI wire format as Switchyard speaks it (docs/specification.md, "Endpoints").
// Requests keep every field the client sent, so the types allow fields they do not name.

export interface TextContentPart {
  type: 'text';
  text: string;
}

export interface ImageContentPart {
  type: 'image_url';
  image_url: { url: string; detail?: string };
}

export type ContentPart =
  TextContentPart | ImageContentPart | { type: string; [field: string]: unknown };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  function_call?: { name: string; arguments: string };
  [field: string]: unknown;
}

export interface FunctionDefinition {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  temperature?: number;
  max_tokens?: number;
  tools?: { type: 'function'; function: FunctionDefinition }[];
  tool_choice?: unknown;
  functions?: FunctionDefinition[];
  function_call?: unknown;
  [field: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** The part of the prompt read from the provider's prompt cache. */
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint?: string;
  choices: {
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      tool_calls?: ToolCall[];
      function_call?: { name: string; arguments: string };
    };
    logprobs: null;
    finish_reason: 'stop' | 'length' | 'tool_calls' | 'function_call' | 'content_filter';
  }[];
  usage: Usage;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint?: string;
  choices: {
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      tool_calls?: (Partial<ToolCall> & { index: number })[];
      function_call?: { name?: string; arguments?: string };
    };
    logprobs: null;
    finish_reason: string | null;
  }[];
  usage?: Usage | null;
}

export interface EmbeddingRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  [field: string]: unknown;
}

export interface EmbeddingResponse {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

export interface ImageGenerationRequest {
  model?: string;
  prompt: string;
  n?: number;
  size?: string;
  response_format?: 'url' | 'b64_json';
  [field: string]: unknown;
}

export interface ImageGenerationResponse {
  created: number;
  data: { url?: string; b64_json?: string; revised_prompt?: string }[];
  usage?: { input_tokens?: number; output_tokens?: number; total_tokens?: number };
}

export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

export interface ModelList {
  object: 'list';
  data: ModelObject[];
}

/** The line that ends every OpenAI event stream. */
export const SSE_DONE = 'data: [DONE]\n\n';
