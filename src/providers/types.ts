// The OpenAI Chat Completions shapes the Chat door reads and writes, and the few types every
// protocol module shares (a translator's refusal, a parsed SSE event, an upstream call). The
// protocol modules' own interfaces are in ir/protocol.ts. Everything here is pure data: no I/O.

/** A provider's id in the registry (src/providers/registry.ts). */
export type ProviderId = string;

// ---- request -------------------------------------------------------------------------------

export interface TextPart { type: 'text'; text: string }
export interface ImageUrlPart { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
export type ContentPart = TextPart | ImageUrlPart | { type: string; [k: string]: unknown };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | TextPart[]; name?: string }
  | { role: 'user'; content: string | ContentPart[]; name?: string }
  | { role: 'assistant'; content?: string | TextPart[] | null; tool_calls?: ToolCall[]; name?: string; refusal?: string | null }
  | { role: 'tool'; content: string | TextPart[]; tool_call_id: string };

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export type ToolChoice =
  | 'auto' | 'none' | 'required'
  | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } };

/** A validated unified request (see src/providers/validate.ts for the checks). */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  temperature?: number | null;
  top_p?: number | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  stop?: string | string[] | null;
  n?: number | null;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean | null;
  response_format?: ResponseFormat;
  user?: string;
  [field: string]: unknown;
}

// ---- response ------------------------------------------------------------------------------

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  /** DeepSeek's count of prompt tokens read from its context cache (api-docs.deepseek.com/guides/kv_cache). */
  prompt_cache_hit_tokens?: number;
  completion_tokens_details?: { reasoning_tokens?: number };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: { role: 'assistant'; content: string | null; refusal?: string | null; tool_calls?: ToolCall[] };
    logprobs: null;
    finish_reason: FinishReason;
  }>;
  usage?: OpenAIUsage;
}

/** OpenAI's error object, the shape every unified-endpoint error takes. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

// ---- shared by the protocol modules -----------------------------------------------------------

/** A client-side problem found while translating: becomes a 400 OpenAI error naming `param`. */
export class TranslationError extends Error {
  constructor(message: string, readonly param: string | null = null, readonly code: string | null = null) {
    super(message);
    this.name = 'TranslationError';
  }
}

/** One parsed Server-Sent Event (`event:` is absent for OpenAI and Gemini streams). */
export interface SseEvent { event?: string; data: string }

/** What the daemon sends upstream for a translated request. */
export interface UpstreamCall {
  /** Path and query, appended to the provider's origin, e.g. `/v1/messages`. */
  path: string;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}
