// The gateway's automatic cache breakpoints on an Anthropic call (anthropic/provider/
// cache-breakpoints.ts), on fixture requests shaped as the builder makes them: where the marks
// go, that a prefix below the minimum gets none, that the client's own marks count toward the
// limit of 4 and stay where they are, and that a 1-hour mark never follows a 5-minute one.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { placeCacheBreakpoints } from '../../src/providers/protocols/anthropic/provider/cache-breakpoints.js';
import { anthropicProvider } from '../../src/providers/protocols/anthropic/provider/index.js';
import { openaiChatClient } from '../../src/providers/protocols/openai-chat/client/index.js';
import { openaiResponsesClient } from '../../src/providers/protocols/openai-responses/client/index.js';
import type { Target } from '../../src/providers/ir/protocol.js';

type Block = Record<string, any>;
type Body = { tools?: Block[]; system?: Block[]; messages: Array<{ role: string; content: Block[] }> };

/** Text of exactly `n` characters. */
const chars = (n: number, c = 'x') => c.repeat(n);
const text = (t: string, mark?: Block): Block => ({ type: 'text', text: t, ...(mark ? { cache_control: mark } : {}) });
const tool = (name: string, size: number): Block => ({ name, description: chars(size, 'd'), input_schema: { type: 'object', properties: {} } });
const FIVE = { type: 'ephemeral' };
const HOUR = { type: 'ephemeral', ttl: '1h' };

/**
 * An agent's third turn: tools, a system prompt, the task, two tool calls with their results.
 * Sizes in characters; the estimate is 4 characters a token.
 */
function agentTurn(size = { tools: 6000, system: 8000, turns: 400 }): Body {
  return {
    tools: [tool('read', size.tools / 2), tool('write', size.tools / 2)],
    system: [text('You are a coding agent.'), text(chars(size.system))],
    messages: [
      { role: 'user', content: [text(chars(size.turns, 'u'))] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'plan', signature: 'sig1' }, { type: 'tool_use', id: 't1', name: 'read', input: { path: 'a.ts' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: chars(size.turns, 'r') }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'next', signature: 'sig2' }, { type: 'tool_use', id: 't2', name: 'read', input: { path: 'b.ts' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: chars(size.turns, 's') }] },
    ],
  };
}

/** Every mark in reading order: where (tools/system/messages[i][j]) and its cache_control. */
function marks(b: Body): Array<[string, Block]> {
  const out: Array<[string, Block]> = [];
  (b.tools ?? []).forEach((t, i) => { if (t.cache_control) out.push([`tools[${i}]`, t.cache_control]); });
  (b.system ?? []).forEach((t, i) => { if (t.cache_control) out.push([`system[${i}]`, t.cache_control]); });
  b.messages.forEach((m, i) => m.content.forEach((c, j) => {
    if (c.cache_control) out.push([`messages[${i}][${j}]`, c.cache_control]);
    for (const inner of Array.isArray(c.content) ? c.content : []) if (inner.cache_control) out.push([`messages[${i}][${j}].content`, inner.cache_control]);
  }));
  return out;
}

const place = (b: Body, minTokens = 1024, ttl: '5m' | '1h' = '5m') => placeCacheBreakpoints(b as unknown as Record<string, unknown>, { minTokens, ttl }) as unknown as Body;

/** No 1-hour mark after a 5-minute one, and at most 4: what Anthropic accepts. */
function acceptable(b: Body): boolean {
  const m = marks(b);
  return m.length <= 4 && m.every(([, cc], i) => cc.ttl !== '1h' || m.slice(0, i).every(([, before]) => before.ttl === '1h'));
}

describe('automatic cache breakpoints', () => {
  it('mark the end of the conversation, of the system prompt, of the tools and of the previous turn, as 5-minute marks', () => {
    const b = place(agentTurn());
    expect(marks(b)).toEqual([
      ['tools[1]', FIVE], ['system[1]', FIVE], ['messages[2][0]', FIVE], ['messages[4][0]', FIVE],
    ]);
  });

  it('put nothing on a prompt shorter than the model\'s minimum', () => {
    const b = place(agentTurn({ tools: 400, system: 400, turns: 40 }));
    expect(marks(b)).toEqual([]);
  });

  it('mark only the prefixes that reach the minimum: not short tools, but the system prompt after them', () => {
    // Tools ~1,500 characters: under 1,024 tokens; with the system prompt, over.
    const b = place(agentTurn({ tools: 1400, system: 8000, turns: 40 }));
    expect(marks(b).map(([at]) => at)).toEqual(['system[1]', 'messages[2][0]', 'messages[4][0]']);
  });

  it('count four characters a token, and nothing for images and thinking: a prefix is marked only once that reaches the minimum', () => {
    const image: Block = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: chars(100_000, 'A') } };
    const just = (n: number): Body => ({ messages: [{ role: 'user', content: [image, text(chars(n))] }] });
    expect(marks(place(just(4 * 1024)))).toEqual([['messages[0][1]', FIVE]]);
    expect(marks(place(just(4 * 1024 - 1)))).toEqual([]);
  });

  it('never mark a thinking block: the end mark goes on the last block that can carry one', () => {
    const b: Body = { system: [text(chars(5000))], messages: [
      { role: 'user', content: [text('go')] },
      { role: 'assistant', content: [text('prefill'), { type: 'thinking', thinking: 't', signature: 's' }] },
    ] };
    expect(marks(place(b)).map(([at]) => at)).toEqual(['system[0]', 'messages[1][0]']);
  });

  it('leave the client\'s own marks where they are, and add only in the room they leave: 3 marks get one more', () => {
    const b = agentTurn();
    b.system![0]!.cache_control = FIVE;
    b.messages[0]!.content[0]!.cache_control = FIVE;
    b.tools![0]!.cache_control = FIVE;
    expect(marks(place(b))).toEqual([['tools[0]', FIVE], ['system[0]', FIVE], ['messages[0][0]', FIVE], ['messages[4][0]', FIVE]]);
  });

  it('add nothing to 4 client marks, nor to more (Anthropic refuses those itself)', () => {
    for (const n of [4, 5]) {
      const b = agentTurn();
      const spots = [b.tools![0]!, b.tools![1]!, b.system![0]!, b.system![1]!, b.messages[0]!.content[0]!].slice(0, n);
      for (const s of spots) s.cache_control = FIVE;
      expect(marks(place(b))).toHaveLength(n);
    }
  });

  it('count a mark inside a tool result, and do not mark a block the client marked already', () => {
    const b = agentTurn();
    b.messages[4]!.content[0]!.content = [{ type: 'text', text: chars(400), cache_control: FIVE }];
    expect(marks(place(b)).map(([at]) => at)).toEqual(['tools[1]', 'system[1]', 'messages[2][0]', 'messages[4][0].content']);
  });

  it('count every mark inside a tool result: a marked system part and a result with two marked parts get one more, not two', () => {
    const b = agentTurn();
    b.system![0]!.cache_control = FIVE;
    b.messages[4]!.content[0]!.content = [{ type: 'text', text: chars(200), cache_control: FIVE }, { type: 'text', text: chars(200), cache_control: FIVE }];
    const out = place(b);
    expect(marks(out)).toHaveLength(4);
    expect(acceptable(out)).toBe(true);
  });

  it('give 1-hour marks where configured', () => {
    expect(marks(place(agentTurn(), 1024, '1h')).map(([, cc]) => cc)).toEqual([HOUR, HOUR, HOUR, HOUR]);
  });

  it('never put a 1-hour mark after a 5-minute one: shorter after a client\'s 5-minute mark, left out before a client\'s 1-hour one', () => {
    const after = agentTurn();
    after.system![0]!.cache_control = FIVE;
    expect(marks(place(after, 1024, '1h'))).toEqual([['tools[1]', HOUR], ['system[0]', FIVE], ['system[1]', FIVE], ['messages[4][0]', FIVE]]);

    const before = agentTurn();
    before.messages[2]!.content[0]!.cache_control = HOUR;
    // 5-minute marks before the client's 1-hour one would be refused: only the end (after it) is marked.
    expect(marks(place(before, 1024, '5m'))).toEqual([['messages[2][0]', HOUR], ['messages[4][0]', FIVE]]);
  });

  it('always leave a request Anthropic accepts, whatever the client marked', () => {
    const spots = (b: Body) => [b.tools![0]!, b.system![1]!, b.messages[0]!.content[0]!, b.messages[2]!.content[0]!, b.messages[4]!.content[0]!];
    const choices = [undefined, FIVE, HOUR];
    // Every assignment of none / 5m / 1h to five places (the client's order may be refused already: skip those).
    for (let code = 0; code < 3 ** 5; code++) {
      const b = agentTurn();
      spots(b).forEach((s, i) => { const c = choices[Math.floor(code / 3 ** i) % 3]; if (c) s.cache_control = { ...c }; });
      if (!acceptable(b)) continue;
      for (const ttl of ['5m', '1h'] as const) {
        const out = place(structuredClone(b), 1024, ttl);
        expect(acceptable(out), JSON.stringify(marks(out))).toBe(true);
        expect(marks(out).length).toBeGreaterThanOrEqual(marks(b).length);
      }
    }
  });
});

describe('the Anthropic builder with the target\'s cache settings', () => {
  const target: Target = { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-sonnet-4-5', protocol: 'anthropic' };
  const chat = {
    model: 'anthropic/claude-sonnet-4-5',
    messages: [{ role: 'system', content: chars(6000) }, { role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }, { role: 'user', content: 'more' }],
  };
  const build = (t: Target) => anthropicProvider.buildRequest(openaiChatClient.parseRequest(chat, t), t).body as unknown as Body;

  it('places the marks when the target asks, and sends none otherwise', () => {
    expect(marks(build({ ...target, cache: { minTokens: 1024, ttl: '5m' } })).map(([at]) => at)).toEqual(['system[0]', 'messages[0][0]', 'messages[2][0]']);
    expect(marks(build(target))).toEqual([]);
  });

  it('carries a client\'s cache_control from any Chat content part to the block it becomes', () => {
    const eph = { type: 'ephemeral' };
    const body = anthropicProvider.buildRequest(openaiChatClient.parseRequest({
      model: 'anthropic/claude-sonnet-4-5',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'rules', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' }, cache_control: eph }, { type: 'text', text: 'what is it?' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'a cat', cache_control: eph }], tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'done', cache_control: eph }] },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    }, target), target).body as unknown as Body;
    expect(marks(body)).toEqual([['system[0]', HOUR], ['messages[0][0]', FIVE], ['messages[1][0]', FIVE], ['messages[2][0].content', FIVE]]);
  });

  it('keeps a client\'s cache_control on Chat content parts, and adds its own only in the room left', () => {
    const t: Target = { ...target, cache: { minTokens: 1024, ttl: '5m' } };
    const parts = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'text', text: `${chars(2000)}${i}`, cache_control: { type: 'ephemeral' } }));
    const body = anthropicProvider.buildRequest(openaiChatClient.parseRequest({
      model: 'anthropic/claude-sonnet-4-5',
      messages: [{ role: 'system', content: parts(3) }, { role: 'user', content: 'question' }],
    }, t), t).body as unknown as Body;
    expect(marks(body)).toEqual([['system[0]', FIVE], ['system[1]', FIVE], ['system[2]', FIVE], ['messages[0][0]', FIVE]]);
  });
});

describe('on what Codex CLI sent (recorded), translated for Claude', () => {
  const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/protocols/openai-responses-client/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;
  const target: Target = { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-sonnet-4-5', protocol: 'anthropic', cache: { minTokens: 1024, ttl: '5m' } };
  const build = (name: string) => anthropicProvider.buildRequest(openaiResponsesClient.parseRequest(fixture(name), target), target).body as unknown as Body;
  /** The prompt's blocks, in reading order, without their marks, up to and including the marked one at `at`. */
  const prefix = (b: Body, at: string) => {
    const seq: Array<[string, Block]> = [
      ...(b.tools ?? []).map((t, i): [string, Block] => [`tools[${i}]`, t]), ...(b.system ?? []).map((t, i): [string, Block] => [`system[${i}]`, t]),
      ...b.messages.flatMap((m, i) => m.content.map((c, j): [string, Block] => [`messages[${i}][${j}]`, c])),
    ];
    const end = seq.findIndex(([where]) => where === at);
    return JSON.stringify(seq.slice(0, end + 1).map(([, x]) => { const { cache_control: _, ...rest } = x; return rest; }));
  };

  it('its first turn: the tools, the system prompt and the end of the conversation', () => {
    const b = build('codex-first.request.json');
    expect(b.messages).toHaveLength(1);
    const end = `messages[0][${b.messages[0]!.content.length - 1}]`;
    expect(marks(b)).toEqual([[`tools[${b.tools!.length - 1}]`, FIVE], [`system[${b.system!.length - 1}]`, FIVE], [end, FIVE]]);
  });

  it('its turn with a tool result: the same, and the end of its first turn, whose prefix is the one the first turn marked', () => {
    const first = build('codex-first.request.json');
    const next = build('codex-tool-result.request.json');
    const end = `messages[0][${first.messages[0]!.content.length - 1}]`;
    expect(next.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(marks(next).map(([at]) => at)).toEqual([`tools[${next.tools!.length - 1}]`, `system[${next.system!.length - 1}]`, end, 'messages[2][0]']);
    // What the first turn wrote to the cache is exactly what this one marks as the previous turn's end.
    expect(prefix(first, end).length).toBeGreaterThan(10_000);
    expect(prefix(next, end)).toBe(prefix(first, end));
  });
});
