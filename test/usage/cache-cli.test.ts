// The prompt cache, visible: a real gateway process (`gateway start`) against mock providers that
// report cache reads and Anthropic's cache writes by TTL, the same cached turn asked through every
// door by clients that name their sessions (Claude Code's and Codex's headers, x-gateway-session)
// or not. Every door's row counts the turn the same way and prices it by the price list; `gateway
// usage` shows the cache reads, writes, hit ratio and savings by model, key and session, and its
// JSON says how its input count counts the cache. A session is stored as its UUID or a hash, never
// as the name the client sent.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultReply, type MockProviderId, type MockTokens } from '../helpers/mock-provider.js';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.js';

/** 1,540 prompt tokens: 1,200 cache reads; Anthropic also wrote 300 (200 of them for an hour). 30 out. */
const ANTHROPIC_TOKENS: MockTokens = { input: 40, cacheRead: 1200, cacheWrite5m: 100, cacheWrite1h: 200, output: 30 };
const OTHER_TOKENS: MockTokens = { input: 340, cacheRead: 1200, output: 30 };

// data/prices.json: claude-opus-4-6 is 5 in, 0.5 cache read, 6.25 5-minute write (no 1-hour price: 2× input), 25 out;
// gpt-5.4 2.5 in, 0.25 cache read, 15 out. USD per million tokens.
const OPUS_TURN = { cost: (40 * 5 + 1200 * 0.5 + 100 * 6.25 + 200 * 10 + 30 * 25) / 1e6, saved: (1500 * 5 - (1200 * 0.5 + 100 * 6.25 + 200 * 10)) / 1e6 };
const GPT_TURN = { cost: (340 * 2.5 + 1200 * 0.25 + 30 * 15) / 1e6, saved: 1200 * (2.5 - 0.25) / 1e6 };

const CLAUDE_SESSION = 'A7C1B9E2-3D4F-4A5B-8C6D-7E8F9A0B1C2D';
const CODEX_SESSION = '0199a3f2-5b6c-7d8e-9f0a-1b2c3d4e5f60';
const NAMED_SESSION = 'alice-refactoring-the-auth-module';

interface Totals {
  requests: number; inputTokens: number; cachedTokens: number; cacheWriteTokens: number; cacheWrite1hTokens: number;
  outputTokens: number; cacheHitRatio: number | null; cost: number | null; cacheSaved: number | null;
}
interface Summary { by: string; inputTokensIncludeCacheReads: boolean; inputTokensIncludeCacheWrites: boolean; rows: Array<Totals & { group: string; label: string }>; totals: Totals }

let gw: GatewayProcess;
let key: string;

beforeAll(async () => {
  gw = await startGatewayProcess();
  for (const [name, mock] of Object.entries(gw.mocks)) {
    const p = name as MockProviderId;
    mock.setHandler((r) => defaultReply(p, r, p === 'anthropic' ? ANTHROPIC_TOKENS : OTHER_TOKENS));
  }
  key = (await gw.cli(['keys', 'create', '--name', 'agent'])).stdout.trim();
  const messages = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
  const openai = (headers: Record<string, string> = {}) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: headers });
  const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
  const model = 'anthropic/claude-opus-4-6';
  // The same cached turn on Claude through every door: Claude Code (its session header, streamed),
  // Codex (its session header), an OpenAI SDK app naming its session, and a Gemini client naming none.
  await messages.messages.stream({ model: 'claude-opus-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-claude-code-session-id': CLAUDE_SESSION } }).finalMessage();
  await openai({ session_id: CODEX_SESSION }).responses.create({ model, input: 'hi' });
  await openai({ 'x-gateway-session': NAMED_SESSION }).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
  await ai.models.generateContent({ model, contents: 'hi' });
  // Claude Code's session goes on with a GPT model, streamed.
  await messages.messages.stream({ model: 'openai/gpt-5.4', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-claude-code-session-id': CLAUDE_SESSION } }).finalMessage();
});
afterAll(async () => { await gw?.close(); });

async function usage(by: string): Promise<Summary> {
  const r = await gw.cli(['usage', '--since', '24h', '--by', by, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Summary;
}

describe('cached turns in the usage history', () => {
  it('every door\'s row counts the turn the same way, cache reads and writes inside the input, priced by the price list', async () => {
    const res = await fetch(`${gw.url}/admin/usage/requests?limit=10`, { headers: { authorization: `Bearer ${gw.adminToken()}` } });
    const { rows } = (await res.json()) as { rows: Array<Record<string, unknown>> };
    const opus = rows.filter((r) => r.provider === 'anthropic');
    expect(opus.map((r) => r.mode).sort()).toEqual(['gemini', 'messages', 'responses', 'unified']);
    for (const r of opus) {
      expect(r, String(r.mode)).toMatchObject({ inputTokens: 1540, cachedTokens: 1200, cacheWriteTokens: 300, cacheWrite1hTokens: 200, outputTokens: 30 });
      expect(r.cost as number).toBeCloseTo(OPUS_TURN.cost, 10);
      expect(r.cacheSaved as number).toBeCloseTo(OPUS_TURN.saved, 10);
    }
    const gpt = rows.find((r) => r.provider === 'openai')!;
    expect(gpt).toMatchObject({ mode: 'messages', inputTokens: 1540, cachedTokens: 1200, outputTokens: 30 });
    expect(gpt.cost as number).toBeCloseTo(GPT_TURN.cost, 10);
    expect(gpt.cacheSaved as number).toBeCloseTo(GPT_TURN.saved, 10);
  });

  it('gateway usage --json: reads, writes (the 1-hour ones too), hit ratio and savings by model and key, and what its input count includes', async () => {
    const byModel = await usage('model');
    expect(byModel).toMatchObject({ inputTokensIncludeCacheReads: true, inputTokensIncludeCacheWrites: true });
    const opus = byModel.rows.find((r) => r.group === 'anthropic/claude-opus-4-6')!;
    expect(opus).toMatchObject({ requests: 4, inputTokens: 4 * 1540, cachedTokens: 4 * 1200, cacheWriteTokens: 4 * 300, cacheWrite1hTokens: 4 * 200, cacheHitRatio: 0.7792 });
    expect(opus.cost!).toBeCloseTo(4 * OPUS_TURN.cost, 8);
    expect(opus.cacheSaved!).toBeCloseTo(4 * OPUS_TURN.saved, 8);
    const byKey = await usage('key');
    expect(byKey.rows).toHaveLength(1);
    expect(byKey.rows[0]).toMatchObject({ label: 'agent', requests: 5, cachedTokens: 5 * 1200, cacheHitRatio: 0.7792 });
    expect(byKey.totals.cacheSaved!).toBeCloseTo(4 * OPUS_TURN.saved + GPT_TURN.saved, 8);
  });

  it('gateway usage --by session: the sessions clients named, Claude Code\'s across two models', async () => {
    const bySession = await usage('session');
    const groups = Object.fromEntries(bySession.rows.map((r) => [r.group, r.requests]));
    const hashed = bySession.rows.find((r) => r.group.startsWith('h:'))!.group;
    expect(groups).toEqual({ [CLAUDE_SESSION.toLowerCase()]: 2, [CODEX_SESSION]: 1, [hashed]: 1, '': 1 });
    expect(hashed).toMatch(/^h:[0-9a-f]{16}$/);
    expect(bySession.rows.find((r) => r.group === '')!.label).toBe('(none named)');
    const claude = bySession.rows.find((r) => r.group === CLAUDE_SESSION.toLowerCase())!;
    expect(claude.cacheSaved!).toBeCloseTo(OPUS_TURN.saved + GPT_TURN.saved, 8);
  });

  it('the table shows the cache columns and says what its input counts', async () => {
    const r = await gw.cli(['usage', '--since', '24h', '--by', 'model']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const head = lines.find((l) => l.startsWith('MODEL'))!.split(/\s{2,}/);
    expect(head).toEqual(['MODEL', 'REQUESTS', 'ERRORS', 'INPUT', 'CACHE READ', 'CACHE WRITE', 'HIT', 'OUTPUT', 'REASONING', 'COST', 'SAVED']);
    const opus = lines.find((l) => l.startsWith('anthropic/claude-opus-4-6'))!.split(/\s+/);
    expect(opus.slice(1, 7)).toEqual(['4', '0', '6,160', '4,800', '1,200', '77.9%']);
    expect(opus.at(-1)).toBe(`$${(4 * OPUS_TURN.saved).toFixed(4)}`);
    expect(r.stdout).toContain('INPUT includes CACHE READ and CACHE WRITE');
  });

  it('after gateway stop the history file says the same, and holds no name a client gave its session', async () => {
    const before = await usage('session');
    expect((await gw.cli(['stop'])).code).toBe(0);
    expect(readFileSync(join(gw.dir, 'usage.db')).includes(NAMED_SESSION)).toBe(false);
    const after = await usage('session');
    expect(after.rows).toEqual(before.rows);
  });
});
