// Reads token usage out of a native response as it streams past, for the monitor and accounting,
// without touching the bytes the client gets. Only the events that carry usage are parsed.
import type { ProtocolId } from '../../providers/ir/protocol.js';
import type { TokenUsage } from '../observe/events.js';
import { SseParser } from '../http/sse.js';

export interface UsageTap {
  push(chunk: Buffer): void;
  outputTokens(): number | undefined;
  usage(): TokenUsage;
  model(): string | null;
  /** The stream's own terminator was seen (Anthropic `message_stop`, OpenAI `[DONE]`, Responses' last lifecycle event). */
  complete(): boolean;
  /** A Responses answer's id (`resp_…`), which the provider keeps for GET and previous_response_id; null for other protocols. */
  responseId(): string | null;
}

const RESPONSE_ID = /"id":\s*"(resp_[^"]{1,200})"/;

const JSON_CAP = 8 * 1024 * 1024; // larger JSON bodies are forwarded but not read for usage

type Obj = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' ? (v as Obj) : undefined);
function parse(text: string): unknown { try { return JSON.parse(text); } catch { return undefined; } }

/** Anthropic `usage` → our counters (input includes cache reads and writes, as the API defines total input). */
export function anthropicUsage(u: Obj | undefined, into: TokenUsage): void {
  if (!u) return;
  const input = num(u.input_tokens); const read = num(u.cache_read_input_tokens); const write = num(u.cache_creation_input_tokens);
  if (input !== undefined || read !== undefined || write !== undefined) {
    into.inputTokens = (input ?? 0) + (read ?? 0) + (write ?? 0);
    if (read !== undefined) into.cachedTokens = read;
    if (write !== undefined) into.cacheWriteTokens = write;
  }
  if (num(u.output_tokens) !== undefined) into.outputTokens = num(u.output_tokens);
  const thinking = num(obj(u.output_tokens_details)?.thinking_tokens);
  if (thinking !== undefined) into.reasoningTokens = thinking;
}

export function openaiUsage(u: Obj | undefined, into: TokenUsage): void {
  if (!u) return;
  into.inputTokens = num(u.prompt_tokens) ?? num(u.input_tokens);
  into.outputTokens = num(u.completion_tokens) ?? num(u.output_tokens);
  // Chat names the details after prompt/completion, Responses after input/output.
  // DeepSeek counts cache hits in its own prompt_cache_hit_tokens (api-docs.deepseek.com/guides/kv_cache).
  const cached = num(obj(u.prompt_tokens_details ?? u.input_tokens_details)?.cached_tokens) ?? num(u.prompt_cache_hit_tokens);
  if (cached !== undefined) into.cachedTokens = cached;
  const written = num(obj(u.prompt_tokens_details)?.cache_write_tokens);
  if (written !== undefined) into.cacheWriteTokens = written;
  const reasoning = num(obj(u.completion_tokens_details ?? u.output_tokens_details)?.reasoning_tokens);
  if (reasoning !== undefined) into.reasoningTokens = reasoning;
}

export function geminiUsage(u: Obj | undefined, into: TokenUsage): void {
  if (!u) return;
  into.inputTokens = (num(u.promptTokenCount) ?? 0) + (num(u.toolUsePromptTokenCount) ?? 0);
  const thoughts = num(u.thoughtsTokenCount);
  into.outputTokens = (num(u.candidatesTokenCount) ?? 0) + (thoughts ?? 0);
  if (num(u.cachedContentTokenCount) !== undefined) into.cachedTokens = num(u.cachedContentTokenCount);
  if (thoughts !== undefined) into.reasoningTokens = thoughts;
}

/**
 * The JSON object that follows the last `"key":` in `body`, cut out with a string-aware brace scan,
 * so a large answer is neither decoded nor parsed whole just to read its usage. The tail is read
 * as latin1 (one char per byte, the cheapest decoding): braces and quotes are ASCII, and usage
 * objects hold numbers.
 */
export function objectAfterLastKey(body: Buffer, key: string): unknown {
  const at = body.lastIndexOf(keyBytes(key));
  if (at === -1) return undefined;
  const text = body.toString('latin1', at + key.length + 2);
  const start = text.indexOf('{');
  if (start === -1) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \\ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */) depth++;
    else if (c === 125 /* } */ && --depth === 0) return parse(text.slice(start, i + 1));
  }
  return undefined;
}

// Quoted key names as bytes, made once: Buffer#indexOf with a string argument encodes it per call.
const keyCache = new Map<string, Buffer>();
function keyBytes(key: string): Buffer {
  let b = keyCache.get(key);
  if (!b) { b = Buffer.from(`"${key}"`); keyCache.set(key, b); }
  return b;
}

/** The string value of the first `"key": "…"` in `body` (read from the few bytes after the key). */
function firstStringValue(body: Buffer, key: string): string | null {
  const at = body.indexOf(keyBytes(key));
  if (at === -1) return null;
  let i = at + key.length + 2;
  while (i < body.length && (body[i] === 32 || body[i] === 58 /* : */ || body[i] === 10 || body[i] === 13 || body[i] === 9)) i++;
  if (body[i] !== 34) return null;
  const end = body.indexOf(34, i + 1);
  if (end === -1 || end - i > 512) return null;
  return body.toString('utf8', i + 1, end);
}

/** Usage and model from a whole JSON answer (or Gemini's JSON-array stream). */
function usageFromJsonBody(protocol: ProtocolId, body: Buffer, usage: TokenUsage): string | null {
  const u = obj(objectAfterLastKey(body, protocol === 'gemini' ? 'usageMetadata' : 'usage'));
  if (protocol === 'anthropic') anthropicUsage(u, usage);
  else if (protocol === 'gemini') geminiUsage(u, usage);
  else openaiUsage(u, usage);
  const model = firstStringValue(body, protocol === 'gemini' ? 'modelVersion' : 'model');
  return model === null ? null : model.replace(/^models\//, '');
}

function fromBody(protocol: ProtocolId, body: unknown, usage: TokenUsage): string | null {
  const items = Array.isArray(body) ? body : [body]; // Gemini's non-SSE stream is a JSON array
  let model: string | null = null;
  for (const item of items) {
    const o = obj(item);
    if (!o) continue;
    if (protocol === 'anthropic') anthropicUsage(obj(o.usage), usage);
    else if (protocol === 'gemini') geminiUsage(obj(o.usageMetadata), usage);
    else openaiUsage(obj(o.usage), usage);
    const m = o.model ?? o.modelVersion;
    if (typeof m === 'string') model = m.replace(/^models\//, '');
  }
  return model;
}

export function createNativeUsageTap(protocol: ProtocolId, contentType: string): UsageTap | undefined {
  const usage: TokenUsage = {};
  let model: string | null = null;
  if (contentType.includes('text/event-stream')) {
    const parser = new SseParser();
    let lastGemini: string | undefined;
    let complete = false;
    let responseId: string | null = null;
    const onData = (ev: { event?: string; data: string }) => {
      if (protocol === 'anthropic') {
        if (ev.event === 'message_stop') complete = true;
        if (ev.event !== 'message_start' && ev.event !== 'message_delta') return;
        const o = obj(parse(ev.data));
        const msg = obj(o?.message);
        if (msg) { anthropicUsage(obj(msg.usage), usage); if (typeof msg.model === 'string') model = msg.model; }
        anthropicUsage(obj(o?.usage), usage);
      } else if (protocol === 'openai-chat') {
        if (ev.data === '[DONE]') { complete = true; return; }
        if (model === null) { const m = /"model":"([^"]+)"/.exec(ev.data); if (m) model = m[1]!; }
        if (!ev.data.includes('"usage":{')) return;
        openaiUsage(obj(obj(parse(ev.data))?.usage), usage);
      } else if (protocol === 'openai-responses') {
        // The lifecycle events carry the response object; only the last one has usage.
        if (model === null) { const m = /"model":"([^"]+)"/.exec(ev.data); if (m) model = m[1]!; }
        if (responseId === null && ev.event === 'response.created') responseId = RESPONSE_ID.exec(ev.data)?.[1] ?? null;
        if (ev.event !== 'response.completed' && ev.event !== 'response.incomplete' && ev.event !== 'response.failed') return;
        complete = true;
        openaiUsage(obj(obj(obj(parse(ev.data))?.response)?.usage), usage);
      } else {
        lastGemini = ev.data; // cumulative: only the latest matters, parsed on demand
      }
    };
    const flushGemini = () => {
      if (lastGemini === undefined) return;
      const m = fromBody('gemini', parse(lastGemini), usage);
      if (m) model = m;
      lastGemini = undefined;
    };
    return {
      push(chunk) { for (const ev of parser.push(chunk)) onData(ev); },
      outputTokens() { flushGemini(); return usage.outputTokens; },
      usage() { for (const ev of parser.end()) onData(ev); flushGemini(); return usage; },
      model() { flushGemini(); return model; },
      complete: () => complete,
      responseId: () => responseId,
    };
  }
  if (contentType.includes('json')) return new JsonUsageTap(protocol);
  return undefined;
}

/** A whole JSON answer: its bytes are kept (up to JSON_CAP) and read once, when asked. */
class JsonUsageTap implements UsageTap {
  private parts: Buffer[] = [];
  private size = 0;
  private read = false;
  private readonly found: TokenUsage = {};
  private foundModel: string | null = null;
  private foundId: string | null = null;

  constructor(private readonly protocol: ProtocolId) {}

  push(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size <= JSON_CAP) this.parts.push(chunk);
  }

  outputTokens(): number | undefined { return undefined; }
  usage(): TokenUsage { this.finish(); return this.found; }
  model(): string | null { this.finish(); return this.foundModel; }
  complete(): boolean { return false; }
  responseId(): string | null { this.finish(); return this.foundId; }

  private finish(): void {
    if (this.read) return;
    this.read = true;
    const { parts, size } = this;
    if (size > 0 && size <= JSON_CAP) {
      const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
      this.foundModel = usageFromJsonBody(this.protocol, body, this.found);
      // The response object's own id is its first key.
      if (this.protocol === 'openai-responses') this.foundId = RESPONSE_ID.exec(body.toString('latin1', 0, 512))?.[1] ?? null;
    }
    this.parts = [];
  }
}
