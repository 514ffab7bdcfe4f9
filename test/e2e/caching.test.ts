// Prompt caching with the real coding agents (offline, against mock providers): Codex CLI's and
// gemini-cli's tool loops on a Claude model through the Responses and Gemini doors, where the
// gateway's automatic breakpoints make every turn after the first read the conversation from
// Anthropic's cache (the caching mock, test/helpers/anthropic-cache.ts, bills each turn as
// Anthropic would); Claude Code on a Claude model, whose requests (with its own marks) reach
// Anthropic byte for byte and are cached by its own marks alone; Claude Code on a GPT model, whose
// session becomes one stable prompt_cache_key.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicCacheMock, type Answer, type CachedTurn } from '../helpers/anthropic-cache.js';
import { runClaudeCode } from '../helpers/claude-code.js';
import { runCodex } from '../helpers/codex.js';
import { runGeminiCli } from '../helpers/gemini-cli.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import type { MockHandler, Recorded } from '../helpers/mock-provider.js';
import { startRecordingHop } from '../helpers/recording-hop.js';

const CITIES = ['Paris', 'Berlin', 'Rome', 'Madrid'];
const SECRET = `cached-note-${process.pid}`;

let gw: TestGateway;
let work: string;
beforeAll(async () => {
  gw = await startTestGateway();
  work = mkdtempSync(join(tmpdir(), 'gateway-caching-'));
  writeFileSync(join(work, 'note.txt'), `${SECRET}\n`);
});
afterAll(async () => {
  await gw?.close();
  rmSync(work, { recursive: true, force: true });
});

const json = (r: Recorded) => JSON.parse(r.body.toString('utf8')) as Record<string, any>;
const toolResults = (body: Record<string, any>) => body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((c: any) => c.type === 'tool_result');
/** The turn's numbers as the report gives them. */
const row = (t: CachedTurn, i: number) => `turn ${i + 1}: ${t.total} input tokens, ${t.usage.cache_read_input_tokens} read from cache (${Math.round((100 * t.usage.cache_read_input_tokens) / t.total)}%), ${t.usage.cache_creation_input_tokens} written, ${t.usage.input_tokens} uncached`;

/** Claude: thinks, then asks the weather of the next city, until it has them all; then reports. */
function weatherLoop(): (body: Record<string, any>) => Answer {
  let calls = 0;
  return (body) => {
    const tool = (body.tools ?? []).find((t: any) => /get_weather$/.test(t.name))?.name;
    const done = toolResults(body).length;
    if (!tool || done >= CITIES.length) return [{ type: 'text', text: `Weather report: ${done} cities checked.` }];
    return [
      { type: 'thinking', thinking: `Next: ${CITIES[done]}.`, signature: `sig-${done}` },
      { type: 'tool_use', id: `toolu_w${++calls}`, name: tool, input: { city: CITIES[done] } },
    ];
  };
}

/** The tool loop's turns (requests offering the weather tool), each read from the cache but for what the turn before added. */
function expectCachedLoop(client: string, bodies: Array<Record<string, any>>, turns: CachedTurn[]): void {
  const loop = turns.filter((_, i) => (bodies[i]!.tools ?? []).some((t: any) => /get_weather$/.test(t.name)));
  expect(loop).toHaveLength(CITIES.length + 1);
  console.log(`${client} → anthropic/claude-sonnet-4-5, per turn:\n${loop.map(row).join('\n')}`);
  expect(loop[0]!.usage.cache_creation_input_tokens).toBeGreaterThan(0.9 * loop[0]!.total);
  for (const [i, t] of loop.entries()) {
    if (i === 0) continue;
    const before = loop[i - 1]!.usage;
    // Everything the turn before had read or written is read now: only the new blocks are not.
    expect(t.usage.cache_read_input_tokens, row(t, i)).toBe(before.cache_read_input_tokens + before.cache_creation_input_tokens);
    expect(t.usage.cache_read_input_tokens / t.total, row(t, i)).toBeGreaterThan(0.9);
  }
}

const PROMPT = `Get the weather of ${CITIES.join(', ')}, one after the other, with the weather tool.`;

describe('coding agents that cannot mark, on a Claude model', () => {
  it('Codex CLI (Responses door): a four-call tool loop, from the second turn on nearly all of each turn\'s input read from the cache', async () => {
    const mock = anthropicCacheMock({ answer: weatherLoop() });
    gw.mocks.anthropic.setHandler(mock.handler);
    const before = gw.mocks.anthropic.requests.length;
    try {
      const run = await runCodex({ url: gw.url, key: gw.key, model: 'anthropic/claude-sonnet-4-5', prompt: PROMPT, mcp: true, timeoutMs: 170_000 });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`Weather report: ${CITIES.length} cities checked.`);
      expectCachedLoop('Codex CLI', gw.mocks.anthropic.requests.slice(before).map(json), mock.turns);
    } finally { gw.mocks.anthropic.setHandler(undefined); }
  }, 180_000);

  it('gemini-cli (Gemini door): the same', async () => {
    const mock = anthropicCacheMock({ answer: weatherLoop() });
    gw.mocks.anthropic.setHandler(mock.handler);
    const before = gw.mocks.anthropic.requests.length;
    try {
      const run = await runGeminiCli({ url: gw.url, key: gw.key, model: 'anthropic/claude-sonnet-4-5', prompt: PROMPT, mcp: true, timeoutMs: 170_000 });
      expect(run.stdout, run.stderr).toContain(`Weather report: ${CITIES.length} cities checked.`);
      expect(run.code).toBe(0);
      expectCachedLoop('gemini-cli', gw.mocks.anthropic.requests.slice(before).map(json), mock.turns);
    } finally { gw.mocks.anthropic.setHandler(undefined); }
  }, 180_000);
});

/** Headers a hop rewrites by nature (framing, host, compression) or that carry the credential. */
const NOT_FORWARDED_AS_IS = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'accept-encoding', 'authorization', 'x-api-key']);

describe('Claude Code', () => {
  const runClaude = (model: string, prompt: string, url = gw.url) =>
    runClaudeCode({ url, key: gw.key, model, prompt, cwd: work, allowedTools: ['Read'], timeoutMs: 90_000 });

  it('on a Claude model: its requests reach Anthropic byte for byte with its own marks, and those alone warm the cache', async () => {
    /** Claude: reads note.txt with the Read tool, then says what it read. */
    const answer = (body: Record<string, any>): Answer => {
      const result = toolResults(body)[0];
      if (result) return [{ type: 'text', text: `The note says: ${/cached-note-\d+/.exec(JSON.stringify(result.content))?.[0] ?? '(nothing)'}` }];
      if ((body.tools ?? []).some((t: any) => t.name === 'Read')) return [{ type: 'tool_use', id: 'toolu_read1', name: 'Read', input: { file_path: join(work, 'note.txt') } }];
      return [{ type: 'text', text: 'Hello.' }];
    };
    const mock = anthropicCacheMock({ answer });
    gw.mocks.anthropic.setHandler(mock.handler);
    const hop = await startRecordingHop(gw.url);
    try {
      const upstreamBefore = gw.mocks.anthropic.requests.length;
      const r = await runClaude('anthropic/claude-opus-5', 'What does note.txt say?', hop.url);
      expect(r.stdout, r.stderr).toContain(`The note says: ${SECRET}`);
      expect(r.code).toBe(0);
      const sent = hop.requests.filter((q) => q.method === 'POST' && q.url.startsWith('/v1/messages') && !q.url.includes('count_tokens'));
      const received = gw.mocks.anthropic.requests.slice(upstreamBefore).filter((q) => !q.url.includes('count_tokens'));
      expect(received).toHaveLength(sent.length);
      for (const [i, client] of sent.entries()) {
        const raw = client.body.toString('utf8');
        // The model's name is the one change: Claude Code's marks, and everything else, as it sent them.
        expect(received[i]!.body.toString('utf8')).toBe(raw.replace('"model":"anthropic/claude-opus-5"', '"model":"claude-opus-5"'));
        for (const [name, value] of Object.entries(client.headers)) if (!NOT_FORWARDED_AS_IS.has(name)) expect(received[i]!.headers[name], name).toEqual(value);
      }
      // The tool loop: the request with the Read result reads from the cache what the one before wrote,
      // by Claude Code's own marks (the gateway added none: the bodies are Claude Code's).
      const loop = received.map(json).map((b, i) => ({ b, t: mock.turns[mock.turns.length - received.length + i]! })).filter(({ b }) => (b.tools ?? []).length > 0);
      const withResult = loop.findIndex(({ b }) => toolResults(b).length > 0);
      expect(withResult).toBeGreaterThan(0);
      const { t } = loop[withResult]!;
      expect(t.marks.length).toBeGreaterThan(0);
      expect(t.marks.length).toBeLessThanOrEqual(4);
      console.log(`Claude Code → anthropic/claude-opus-5 (its own marks):\n${loop.map(({ t: x }, i) => row(x, i)).join('\n')}`);
      expect(t.usage.cache_read_input_tokens / t.total).toBeGreaterThan(0.5);
    } finally {
      await hop.close();
      gw.mocks.anthropic.setHandler(undefined);
    }
  }, 120_000);

  it('on a GPT model: every request of its session carries the same prompt_cache_key, a hash of the session', async () => {
    /** GPT: reads note.txt with the Read tool, then says what it read. */
    const reader: MockHandler = (r) => {
      if (!r.url.startsWith('/v1/chat/completions')) return undefined;
      const b = json(r);
      const last = b.messages.at(-1);
      const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-c', object: 'chat.completion.chunk', created: 1, model: b.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const usage = `data: ${JSON.stringify({ id: 'chatcmpl-c', object: 'chat.completion.chunk', created: 1, model: b.model, choices: [], usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 } })}\n\n`;
      const chunks = last.role === 'tool'
        ? [chunk({ role: 'assistant', content: `The note says: ${/cached-note-\d+/.exec(String(last.content))?.[0] ?? '(nothing)'}` }, null), chunk({}, 'stop')]
        : (b.tools ?? []).some((t: any) => t.function?.name === 'Read')
          ? [chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_r1', type: 'function', function: { name: 'Read', arguments: JSON.stringify({ file_path: join(work, 'note.txt') }) } }] }, null), chunk({}, 'tool_calls')]
          : [chunk({ role: 'assistant', content: 'Hello.' }, null), chunk({}, 'stop')];
      return { headers: { 'content-type': 'text/event-stream' }, chunks: [...chunks, usage, 'data: [DONE]\n\n'] };
    };
    gw.mocks.openai.setHandler(reader);
    const hop = await startRecordingHop(gw.url);
    try {
      const before = gw.mocks.openai.requests.length;
      const r = await runClaude('openai/gpt-5.4', 'What does note.txt say?', hop.url);
      expect(r.stdout, r.stderr).toContain(`The note says: ${SECRET}`);
      const sessions = new Set(hop.requests.map((q) => q.headers['x-claude-code-session-id']));
      expect(sessions.size).toBe(1);
      const session = [...sessions][0];
      expect(session).toEqual(expect.any(String));
      const sent = gw.mocks.openai.requests.slice(before);
      const keys = new Set(sent.map((q) => json(q).prompt_cache_key));
      expect(sent.length).toBeGreaterThan(1);
      expect(keys.size).toBe(1);
      expect([...keys][0]).toMatch(/^gateway-[0-9a-f]{32}$/);
      for (const q of sent) expect(q.body.toString('utf8')).not.toContain(session);
    } finally {
      await hop.close();
      gw.mocks.openai.setHandler(undefined);
    }
  }, 120_000);
});
