// Reads token usage out of a native response as it streams past, for the monitor and accounting,
// without touching the bytes the client gets. The reading itself is each protocol's one usage reader
// (providers/protocols/<p>/usage.ts, the same the translating readers use); this is the byte-level
// part: SSE parsing, and a whole JSON answer kept (up to a cap) and scanned for its usage only when
// asked, never parsed whole.
import type { ProtocolId } from '../../providers/ir/protocol.js';
import type { UsageReader, UsageStreamTap } from '../../providers/ir/usage-reader.js';
import { USAGE_READERS } from '../../providers/protocols/usage-readers.js';
import { irUsageToTokens, type TokenUsage } from '../observe/events.js';
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

const JSON_CAP = 8 * 1024 * 1024; // larger JSON bodies are forwarded but not read for usage

function parse(text: string): unknown { try { return JSON.parse(text); } catch { return undefined; } }

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

export function createNativeUsageTap(protocol: ProtocolId, contentType: string): UsageTap | undefined {
  const reader = USAGE_READERS[protocol];
  if (contentType.includes('text/event-stream')) return new SseUsageTap(reader.createStreamTap());
  if (contentType.includes('json')) return new JsonUsageTap(reader);
  return undefined;
}

/** A stream: its events go through the protocol's stream tap as they pass. */
class SseUsageTap implements UsageTap {
  private readonly parser = new SseParser();

  constructor(private readonly tap: UsageStreamTap) {}

  push(chunk: Buffer): void {
    for (const ev of this.parser.push(chunk)) this.tap.push(ev);
  }

  outputTokens(): number | undefined { return this.tap.usage()?.outputTokens; }
  usage(): TokenUsage {
    for (const ev of this.parser.end()) this.tap.push(ev); // a last event without its blank line
    return irUsageToTokens(this.tap.usage());
  }
  model(): string | null { return this.tap.model() ?? null; }
  complete(): boolean { return this.tap.complete(); }
  responseId(): string | null { return this.tap.responseId() ?? null; }
}

/** A whole JSON answer (or Gemini's JSON-array stream): its bytes are kept (up to JSON_CAP) and read once, when asked. */
class JsonUsageTap implements UsageTap {
  private parts: Buffer[] = [];
  private size = 0;
  private read = false;
  private found: TokenUsage = {};
  private foundModel: string | null = null;
  private foundId: string | null = null;

  constructor(private readonly reader: UsageReader) {}

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
    const { parts, size, reader } = this;
    if (size > 0 && size <= JSON_CAP) {
      const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
      // The last usage object: a whole answer's own (after its content), or a JSON-array stream's latest.
      this.found = irUsageToTokens(reader.fromUsage(objectAfterLastKey(body, reader.usageKey)));
      const model = firstStringValue(body, reader.modelKey);
      if (model !== null) this.foundModel = reader.modelId(model);
      if (reader.answerId) this.foundId = reader.answerId(body.toString('latin1', 0, 512)) ?? null;
    }
    this.parts = [];
  }
}
