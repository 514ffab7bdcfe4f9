// Automatic prompt-cache breakpoints on an Anthropic Messages call, for a client that could not
// mark any itself (one speaking Chat, Responses or Gemini): Anthropic caches a prompt only up to a
// block marked with `cache_control`, so without marks a coding agent pays the full input price on
// every turn. As Anthropic's guide recommends for multi-turn agents, the marks go on the end of the
// conversation so far (the next turn reads everything before it), the end of the system prompt and
// the end of the tools (the stable prefix, kept when the conversation is rewritten), and the end of
// the previous turn (read back exactly even when a turn added more blocks than Anthropic's 20-block
// look-back). Rules:
// - never more than 4 marks in all: the client's own (Chat content parts carry them) count, and
//   are never moved; the gateway's go in the room they leave, in the order above;
// - a mark goes only where the prefix up to it reaches the model's minimum cacheable length, by a
//   conservative estimate (below);
// - a longer TTL never follows a shorter one (Anthropic refuses a 1-hour mark after a 5-minute
//   one): a gateway mark takes the configured TTL, shortened to the shortest before it, and is
//   left out where the client's own marks leave no valid TTL.
// The estimate counts CHARS_PER_TOKEN characters a token of text, tool definitions and tool
// calls, and nothing for images, PDFs and thinking: Claude's tokenizer makes more tokens of the
// same text, so a prefix estimated at the minimum is at least that long, and a mark is never spent
// on a prefix too short to cache (at worst one lands a turn later than it could have).
// Pure: it marks the blocks of a body the builder has just made (they are its own objects).
import { CHARS_PER_TOKEN } from '../../../ir/estimate-tokens.js';
import type { CacheTtl } from '../../../ir/types.js';
import type { Block } from './build-content.js';

/** Anthropic's limit of blocks with `cache_control` in one request. */
export const MAX_BREAKPOINTS = 4;

const TTL_RANK: Readonly<Record<CacheTtl, number>> = { '5m': 0, '1h': 1 };

interface Message { role?: unknown; content?: unknown }

/** Marks `body` (tools, system, messages as buildAnthropicRequest makes them) and returns it. */
export function placeCacheBreakpoints(body: Record<string, unknown>, opts: { minTokens: number; ttl: CacheTtl }): Record<string, unknown> {
  const tools = blocks(body.tools);
  const system = blocks(body.system);
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Message[];
  // Every block in the order Anthropic reads the prompt: tools, system, then the turns.
  const seq: Block[] = [...tools, ...system];
  const turnStart: number[] = [];
  for (const m of messages) { turnStart.push(seq.length); seq.push(...blocks(m.content)); }

  // Every mark the client placed counts, each of a tool result's inner blocks included.
  const marks: Array<{ at: number; ttl: CacheTtl }> = [];
  seq.forEach((b, at) => { for (const ttl of markTtls(b)) marks.push({ at, ttl }); });
  if (marks.length >= MAX_BREAKPOINTS) return body;

  const last = messages.length - 1;
  const lastAssistant = messages.findLastIndex((m) => m.role === 'assistant');
  const endOf = (turn: number): number | undefined => {
    const from = turnStart[turn];
    if (from === undefined) return undefined;
    const to = turn + 1 < turnStart.length ? turnStart[turn + 1]! : seq.length;
    for (let at = to - 1; at >= from; at--) if (markable(seq[at]!)) return at;
    return undefined;
  };
  const candidates = [
    endOf(last),
    system.length > 0 ? tools.length + system.length - 1 : undefined,
    tools.length > 0 ? tools.length - 1 : undefined,
    lastAssistant > 0 && lastAssistant < last && messages[lastAssistant - 1]?.role === 'user' ? endOf(lastAssistant - 1) : undefined,
  ];

  const reach = reachesAt(seq, opts.minTokens);
  for (const at of candidates) {
    if (marks.length >= MAX_BREAKPOINTS) break;
    if (at === undefined || at < reach || marks.some((m) => m.at === at)) continue;
    const ttl = fittingTtl(opts.ttl, marks, at);
    if (ttl === undefined) continue;
    seq[at]!.cache_control = ttl === '1h' ? { type: 'ephemeral', ttl } : { type: 'ephemeral' };
    marks.push({ at, ttl });
  }
  return body;
}

const blocks = (v: unknown): Block[] => (Array.isArray(v) ? v.filter((b): b is Block => typeof b === 'object' && b !== null) : []);

/** Thinking blocks cannot carry `cache_control`; every other block the builder makes can. */
const markable = (b: Block): boolean => b.type !== 'thinking' && b.type !== 'redacted_thinking';

/** The TTLs of a block's own mark and of those inside it (a tool result's content), in prompt order. */
function markTtls(b: Block): CacheTtl[] {
  const out: CacheTtl[] = [];
  const own = ttlOf(b.cache_control);
  if (own !== undefined) out.push(own);
  for (const inner of blocks(b.content)) { const t = ttlOf(inner.cache_control); if (t !== undefined) out.push(t); }
  return out;
}

function ttlOf(cc: unknown): CacheTtl | undefined {
  if (typeof cc !== 'object' || cc === null) return undefined;
  return (cc as { ttl?: unknown }).ttl === '1h' ? '1h' : '5m';
}

/**
 * The TTL a new mark at `at` can take: `wanted`, shortened to the shortest mark before it; none
 * when a mark after it is longer still (the client's own marks are then out of order already).
 */
function fittingTtl(wanted: CacheTtl, marks: ReadonlyArray<{ at: number; ttl: CacheTtl }>, at: number): CacheTtl | undefined {
  let rank = TTL_RANK[wanted];
  for (const m of marks) if (m.at < at) rank = Math.min(rank, TTL_RANK[m.ttl]);
  for (const m of marks) if (m.at > at && TTL_RANK[m.ttl] > rank) return undefined;
  return rank === 1 ? '1h' : '5m';
}

/** The first position whose prefix (that block included) reaches `minTokens` by the estimate; past the end if none. */
function reachesAt(seq: readonly Block[], minTokens: number): number {
  const minChars = minTokens * CHARS_PER_TOKEN;
  let chars = 0;
  for (let at = 0; at < seq.length; at++) {
    chars += textChars(seq[at]!);
    if (chars >= minChars) return at;
  }
  return seq.length;
}

/** The characters of a block the estimate counts (text, tool definitions and calls; not media or thinking). */
function textChars(b: Block): number {
  switch (b.type) {
    case 'text': return typeof b.text === 'string' ? b.text.length : 0;
    case 'tool_use': return String(b.name ?? '').length + JSON.stringify(b.input ?? {}).length;
    case 'tool_result':
      if (typeof b.content === 'string') return b.content.length;
      return blocks(b.content).reduce((n, c) => n + textChars(c), 0);
    case 'document': {
      const source = b.source as { type?: unknown; data?: unknown } | undefined;
      return source?.type === 'text' && typeof source.data === 'string' ? source.data.length : 0;
    }
    case 'image': case 'thinking': case 'redacted_thinking': return 0;
    default:
      // A tool definition (it has no `type`).
      if (typeof b.name === 'string' && b.input_schema !== undefined) {
        return b.name.length + (typeof b.description === 'string' ? b.description.length : 0) + JSON.stringify(b.input_schema).length;
      }
      return 0;
  }
}
