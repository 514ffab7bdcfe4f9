// A mock of Anthropic's Messages API that caches prompts as Anthropic documents it
// (platform.claude.com/docs/en/build-with-claude/prompt-caching), as a MockHandler for the
// anthropic mock provider (or any Anthropic-protocol mock):
// - the prompt is read as blocks in order: tools, system, then each message's content blocks;
// - a block marked with `cache_control` (or the last block, for a top-level `cache_control`) is a
//   breakpoint; more than 4 marks is a 400, and so is a 1-hour mark after a 5-minute one;
// - at each breakpoint the longest prefix already cached is looked up, from the breakpoint back
//   at most 20 blocks, and read; the prefix up to each later breakpoint is written, with that
//   breakpoint's TTL, when it reaches the model's minimum cacheable length (else nothing is
//   cached); an entry lives for its TTL after its last use (the clock is injectable);
// - the marks themselves are not part of the cached prefix (moving one does not invalidate it);
// - usage is reported as Anthropic does: `input_tokens` without the cache, `cache_read_input_tokens`,
//   `cache_creation_input_tokens` and `cache_creation` by TTL, in the answer or message_start, and
//   cumulatively in message_delta.
// Tokens are counted by a fixed, documented rule: a block's JSON (without its marks) at 4
// characters a token, rounded up. `turns` keeps what each answered request was billed.
import { createHash } from 'node:crypto';
import type { MockHandler, MockReply, Recorded } from './mock-provider.js';

export type Ttl = '5m' | '1h';
const TTL_MS: Record<Ttl, number> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };
const LOOKBACK = 20;
const MAX_MARKS = 4;

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  output_tokens: number;
}

export interface CachedTurn {
  model: string;
  /** Every input token of the request (uncached, read and written). */
  total: number;
  usage: CacheUsage;
  /** The marks the request carried. */
  marks: Array<{ at: number; ttl: Ttl }>;
  /** How many blocks the prompt had. */
  blocks: number;
}

type Block = Record<string, unknown>;
export type Answer = Block[];

export interface AnthropicCacheMock {
  handler: MockHandler;
  turns: CachedTurn[];
  /** Forget every cached prefix. */
  clear(): void;
}

/** The minimums this mock applies (Anthropic's, for the models the tests use); others get 1,024. */
export const MOCK_MINIMUMS: ReadonlyArray<readonly [string, number]> = [['claude-opus-5', 512], ['claude-sonnet-4-5', 1024], ['claude-haiku-4-5', 4096]];

export function anthropicCacheMock(opts: {
  clock?: () => number;
  minTokens?: (model: string) => number;
  /** What the model answers (content blocks); default a short text. */
  answer?: (body: Record<string, any>) => Answer;
} = {}): AnthropicCacheMock {
  const clock = opts.clock ?? Date.now;
  const minTokens = opts.minTokens ?? ((model: string) => MOCK_MINIMUMS.find(([p]) => model.startsWith(p))?.[1] ?? 1024);
  const answer = opts.answer ?? (() => [{ type: 'text', text: 'Hello from the caching mock.' }]);
  /** prefix hash → when it expires and its TTL. */
  const cache = new Map<string, { expires: number; ttl: Ttl }>();
  const turns: CachedTurn[] = [];

  const handler: MockHandler = (r: Recorded) => {
    if (r.method !== 'POST' || !r.url.split('?')[0]!.endsWith('/v1/messages')) return undefined;
    let body: Record<string, any>;
    try { body = JSON.parse(r.body.toString('utf8')) as Record<string, any>; } catch { return error(400, 'invalid_request_error', 'The request body is not valid JSON.'); }
    const model = String(body.model);
    const seq = promptBlocks(body);
    const marks: Array<{ at: number; ttl: Ttl }> = [];
    for (const [at, b] of seq.entries()) {
      for (const cc of marksOf(b)) {
        const ttl = ttlOf(cc);
        if (ttl === undefined) return error(400, 'invalid_request_error', `cache_control: expected {"type": "ephemeral"} with an optional ttl of "5m" or "1h", got ${JSON.stringify(cc)}`);
        marks.push({ at, ttl });
      }
    }
    if (body.cache_control !== undefined) {
      const ttl = ttlOf(body.cache_control);
      if (ttl === undefined || seq.length === 0) return error(400, 'invalid_request_error', 'cache_control: invalid top-level cache_control');
      marks.push({ at: seq.length - 1, ttl });
    }
    if (marks.length > MAX_MARKS) return error(400, 'invalid_request_error', `A maximum of ${MAX_MARKS} blocks with cache_control may be provided. Found ${marks.length}.`);
    marks.sort((a, b) => a.at - b.at);
    for (let i = 1; i < marks.length; i++) {
      if (marks[i]!.ttl === '1h' && marks.slice(0, i).some((m) => m.ttl === '5m')) {
        return error(400, 'invalid_request_error', 'cache_control: a block with ttl="1h" cannot come after a block with ttl="5m"; longer TTLs must come first.');
      }
    }

    // Prefix hashes and token counts, block by block.
    const now = clock();
    const keys: string[] = [];
    const upTo: number[] = [];
    let h = createHash('sha256').update(model).digest('hex');
    let tokens = 0;
    for (const b of seq) {
      const text = JSON.stringify(withoutMarks(b));
      h = createHash('sha256').update(h).update(text).digest('hex');
      tokens += Math.ceil(text.length / 4);
      keys.push(h);
      upTo.push(tokens);
    }
    const live = (at: number) => { const e = cache.get(keys[at]!); return e !== undefined && e.expires > now ? e : undefined; };

    // The longest cached prefix any breakpoint finds within its look-back; its entry is refreshed.
    let read = -1;
    for (const m of marks) {
      for (let at = m.at; at >= Math.max(0, m.at - LOOKBACK + 1); at--) {
        if (live(at)) { read = Math.max(read, at); break; }
      }
    }
    if (read >= 0) { const e = live(read)!; e.expires = now + TTL_MS[e.ttl]; }
    // Writes: each later breakpoint whose prefix reaches the minimum; the tokens since the last
    // boundary are written at that breakpoint's TTL.
    const written = { '5m': 0, '1h': 0 };
    let from = read;
    const min = minTokens(model);
    for (const m of marks) {
      if (m.at <= from || upTo[m.at]! < min) continue;
      written[m.ttl] += upTo[m.at]! - (from >= 0 ? upTo[from]! : 0);
      cache.set(keys[m.at]!, { expires: now + TTL_MS[m.ttl], ttl: m.ttl });
      from = m.at;
    }
    const readTokens = read >= 0 ? upTo[read]! : 0;
    const creation = written['5m'] + written['1h'];
    const content = answer(body);
    const usage: CacheUsage = {
      input_tokens: tokens - readTokens - creation,
      cache_creation_input_tokens: creation,
      cache_read_input_tokens: readTokens,
      cache_creation: { ephemeral_5m_input_tokens: written['5m'], ephemeral_1h_input_tokens: written['1h'] },
      output_tokens: content.reduce((n, b) => n + Math.ceil(JSON.stringify(b).length / 4), 0),
    };
    turns.push({ model, total: tokens, usage, marks, blocks: seq.length });
    return reply(body, model, content, usage);
  };
  return { handler, turns, clear: () => cache.clear() };
}

/** The prompt's blocks in the order Anthropic reads them. */
function promptBlocks(body: Record<string, any>): Block[] {
  const asBlocks = (v: unknown): Block[] => (typeof v === 'string' ? [{ type: 'text', text: v }] : Array.isArray(v) ? (v as Block[]) : []);
  const out: Block[] = [...(Array.isArray(body.tools) ? (body.tools as Block[]) : []), ...asBlocks(body.system)];
  for (const m of (Array.isArray(body.messages) ? body.messages : []) as Array<{ content?: unknown }>) out.push(...asBlocks(m.content));
  return out;
}

/** A block's marks: its own and those of the blocks inside it (a tool result's content). */
function marksOf(b: Block): unknown[] {
  const inner = Array.isArray(b.content) ? (b.content as Block[]).filter((c) => c?.cache_control !== undefined).map((c) => c.cache_control) : [];
  return b.cache_control !== undefined ? [b.cache_control, ...inner] : inner;
}

function ttlOf(cc: unknown): Ttl | undefined {
  const o = cc as { type?: unknown; ttl?: unknown } | null;
  if (typeof o !== 'object' || o === null || o.type !== 'ephemeral') return undefined;
  if (o.ttl === undefined || o.ttl === '5m') return '5m';
  return o.ttl === '1h' ? '1h' : undefined;
}

function withoutMarks(b: Block): Block {
  const { cache_control: _, ...rest } = b;
  if (Array.isArray(rest.content)) rest.content = (rest.content as Block[]).map((c) => (typeof c === 'object' && c !== null ? withoutMarks(c) : c));
  return rest;
}

function error(status: number, type: string, message: string): MockReply {
  return { status, headers: { 'content-type': 'application/json', 'request-id': 'req_cache_mock' }, body: JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_cache_mock' }) };
}

function reply(body: Record<string, any>, model: string, content: Answer, usage: CacheUsage): MockReply {
  const stop = content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const message = { id: `msg_cache_${Math.random().toString(36).slice(2, 10)}`, type: 'message', role: 'assistant', model };
  if (body.stream !== true) {
    return { headers: { 'content-type': 'application/json', 'request-id': 'req_cache_mock' }, body: JSON.stringify({ ...message, content, stop_reason: stop, stop_sequence: null, usage }) };
  }
  const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  const events = [ev('message_start', { message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } })];
  content.forEach((b, index) => {
    if (b.type === 'text') {
      events.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }), ev('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } }));
    } else if (b.type === 'thinking') {
      events.push(ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
        ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: b.thinking } }),
        ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: b.signature } }));
    } else if (b.type === 'tool_use') {
      events.push(ev('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } }),
        ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } }));
    }
    events.push(ev('content_block_stop', { index }));
  });
  events.push(ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage }), ev('message_stop', {}));
  return { headers: { 'content-type': 'text/event-stream', 'request-id': 'req_cache_mock' }, chunks: events };
}
