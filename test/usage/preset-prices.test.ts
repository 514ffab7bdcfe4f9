// Cost of providers added from a preset: the presets' list prices in data/prices.json, found by the
// preset whatever the user named the provider; the user's `usage.prices` first; unpriced (never 0)
// for a model the table does not list; 0 for a local server. End to end: a real daemon, providers
// checked as config.json is, their real base URLs kept and their traffic sent to a loopback mock.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPriceTable, costOf, findPrice, inPeak, readShippedPrices, type ModelPrice } from '../../src/daemon/observe/usage/prices.js';
import { openUsageHistory, recordUsage, summarize, type UsageRecorder } from '../../src/daemon/observe/usage/index.js';
import { recentRequests } from '../../src/daemon/observe/usage/queries.js';
import { configuredProviders, type StoredProvider } from '../../src/providers/configured.js';
import { findPreset, PRESETS } from '../../src/providers/presets.js';
import { staticSecrets } from '../../src/daemon/store/secrets.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';

const shipped = readShippedPrices() as { presets: Record<string, { source: string; checked: string; models: Record<string, unknown> }> };
const table = buildPriceTable(shipped).table;
const price = (key: string): ModelPrice => table.presets.get(key)!;

describe('the presets\' price table', () => {
  it('names real presets, each with its source and the day it was checked, and every entry parses', () => {
    expect(buildPriceTable(shipped).problems).toEqual([]);
    expect(Object.keys(shipped.presets).length).toBeGreaterThan(0);
    for (const [id, entry] of Object.entries(shipped.presets)) {
      expect(findPreset(id)?.id, id).toBe(id);
      expect(entry.source, id).toMatch(/^https:\/\//);
      expect(entry.checked, id).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    expect(table.presets.size).toBe(Object.values(shipped.presets).reduce((n, e) => n + Object.keys(e.models).length, 0));
    // DeepSeek's cache-hit price is in, not left to the input price.
    expect(price('deepseek/deepseek-flash').cachedInput).toBeLessThan(price('deepseek/deepseek-flash').input);
  });

  it('an Anthropic endpoint of the same account is billed as its preset; one that is not stays unpriced', () => {
    const ids = new Set(Object.keys(shipped.presets));
    for (const p of PRESETS) if (p.billedAs) expect(ids.has(p.billedAs), p.id).toBe(true);
    expect(findPreset('deepseek-anthropic')?.billedAs).toBe('deepseek');
    expect(findPreset('zai-anthropic')?.billedAs).toBeUndefined(); // the GLM Coding Plan: a flat fee
  });

  it('reports what is wrong with a presets section and keeps the rest', () => {
    const { table: t, problems } = buildPriceTable({ models: {}, presets: {
      deepseek: { source: 'https://example.test', checked: '2026-11-15', models: { good: { input: 1, output: 2 }, bad: { input: 'cheap' } } },
      nobody: { source: 'https://example.test', checked: '2026-11-15', models: { m: { input: 1, output: 1 } } },
      groq: { models: { m: { input: 1, output: 1 } } },
      xai: { source: 'https://example.test', checked: '2026-11-15', models: { p: { input: 1, output: 1, peak: { utcHours: [[10, 4]], input: 2, output: 2 } } } },
    } });
    expect([...t.presets.keys()]).toEqual(['deepseek/good']);
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/presets\.deepseek\.models\.bad: needs numeric/);
    expect(problems.join('\n')).toMatch(/presets\.nobody: no preset is named "nobody"/);
    expect(problems.join('\n')).toMatch(/presets\.groq: needs "source" .* and "checked"/);
    expect(problems.join('\n')).toMatch(/presets\.xai\.models\.p: "peak" needs "utcHours"/);
  });

  it('DeepSeek bills peak hours (01-04 and 06-10 UTC, Monday to Friday) at twice the off-peak rate', () => {
    const flash = price('deepseek/deepseek-flash');
    const u = { inputTokens: 10_000, cachedTokens: 8_000, outputTokens: 1_000 };
    const offPeak = (2_000 * 0.15 + 8_000 * 0.003 + 1_000 * 0.6) / 1e6;
    const wed = (h: number, m = 0) => Date.UTC(2026, 10, 25, h, m); // Wednesday 2026-11-25
    expect(costOf(flash, u, wed(2, 30))).toBeCloseTo(2 * offPeak, 12);
    expect(costOf(flash, u, wed(9, 59))).toBeCloseTo(2 * offPeak, 12);
    expect(costOf(flash, u, wed(4))).toBeCloseTo(offPeak, 12); // [from, to): 04:00 is off-peak
    expect(costOf(flash, u, wed(5, 30))).toBeCloseTo(offPeak, 12);
    expect(costOf(flash, u, wed(0, 59))).toBeCloseTo(offPeak, 12);
    expect(costOf(flash, u, Date.UTC(2026, 10, 28, 2))).toBeCloseTo(offPeak, 12); // Saturday
    expect(inPeak(flash.peak!, Date.UTC(2026, 10, 30, 1))).toBe(true); // Monday 01:00
  });
});

/** Usage as DeepSeek reports it: cache hits in its own field, no prompt_tokens_details. */
const USAGE = { prompt_tokens: 10_000, completion_tokens: 1_000, total_tokens: 11_000, prompt_cache_hit_tokens: 8_000, prompt_cache_miss_tokens: 2_000 };

describe('through the daemon: a provider added from a preset is priced by its preset', () => {
  let gw: TestGateway;
  let mock: MockProvider;
  let local: MockProvider;
  let recorder: UsageRecorder;
  let openai: OpenAI;

  beforeAll(async () => {
    [mock, local] = await Promise.all([startMockProvider('openai', { key: 'sk-remote-0123456789' }), startMockProvider('openai', { requireKey: false })]);
    for (const m of [mock, local]) {
      m.setHandler((r) => {
        if (!r.url.endsWith('/chat/completions')) return undefined;
        const { model, stream } = JSON.parse(r.body.toString('utf8')) as { model: string; stream?: boolean };
        if (stream) {
          const chunk = (o: unknown) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model, ...(o as object) })}\n\n`;
          return {
            status: 200, headers: { 'content-type': 'text/event-stream' },
            body: chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] })
              + chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + chunk({ choices: [], usage: USAGE }) + 'data: [DONE]\n\n',
          };
        }
        return {
          status: 200, headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            id: 'c1', object: 'chat.completion', created: 1, model,
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: USAGE,
          }),
        };
      });
    }
    const fromPreset = (id: string, extra: Partial<StoredProvider> = {}): StoredProvider => {
      const p = findPreset(id)!;
      return { protocol: p.protocol, baseUrl: p.baseUrl, preset: p.id, ...(p.quirks ? { quirks: p.quirks } : {}), ...extra };
    };
    // Named as a user would, never after the preset: the price is found by the preset.
    const { providers, problems } = configuredProviders({
      ds: fromPreset('deepseek'),
      'ds-claude': fromPreset('deepseek-anthropic', { protocol: 'openai-chat' }), // same account, billed as DeepSeek
      grok: fromPreset('xai'),
      mine: fromPreset('deepseek'),
      // The preset's values with another base URL: not DeepSeek's bill.
      proxied: fromPreset('deepseek', { baseUrl: 'https://llm-proxy.example.test/v1' }),
      box: fromPreset('ollama', { baseUrl: `${local.origin}/v1`, noKey: true }),
    });
    expect(problems).toEqual([]);
    gw = await startTestGateway({
      settings: { providers },
      secrets: staticSecrets({ ds: mock.key, 'ds-claude': mock.key, grok: mock.key, mine: mock.key, proxied: mock.key }),
      origins: { ds: mock.origin, 'ds-claude': mock.origin, grok: mock.origin, mine: mock.origin, proxied: mock.origin },
    });
    // The user's own price for one of their providers wins over the preset's.
    const history = await openUsageHistory({ dir: gw.dir, config: { prices: { 'mine/deepseek-flash': { input: 1, output: 2, cachedInput: 0.5 } } }, log: () => {} });
    recorder = recordUsage(history, gw.daemon.ctx.bus, () => {});
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await recorder?.close();
    await gw?.close();
    await Promise.all([mock, local].map((m) => m?.close()));
  });

  const ask = async (model: string) => {
    const r = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBe('ok');
    recorder.flush();
    return recentRequests(recorder.store.db, { limit: 1 }).rows[0]!;
  };
  /** DeepSeek Flash's price for USAGE, told from the request's own start time by the published schedule. */
  const flashCost = (startedAt: number) => {
    const d = new Date(startedAt);
    const h = d.getUTCHours();
    const peak = d.getUTCDay() >= 1 && d.getUTCDay() <= 5 && ((h >= 1 && h < 4) || (h >= 6 && h < 10));
    return (peak ? 2 : 1) * (2_000 * 0.15 + 8_000 * 0.003 + 1_000 * 0.6) / 1e6;
  };

  it('DeepSeek under a name of the user\'s choosing: its cache hits at the cache-hit price', async () => {
    const row = await ask('ds/deepseek-flash');
    expect(row).toMatchObject({ provider: 'ds', model: 'deepseek-flash', inputTokens: 10_000, cachedTokens: 8_000, outputTokens: 1_000 });
    expect(row.cost).toBeCloseTo(flashCost(row.startedAt), 12);
    expect(mock.requests.at(-1)!.url).toBe('/v1/chat/completions');
  });

  it('the same price streamed, and through the native prefix', async () => {
    const stream = await openai.chat.completions.create({ model: 'ds/deepseek-flash', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('ok');
    recorder.flush();
    const streamed = recentRequests(recorder.store.db, { limit: 1 }).rows[0]!;
    expect(streamed).toMatchObject({ provider: 'ds', stream: true, cachedTokens: 8_000 });
    expect(streamed.cost).toBeCloseTo(flashCost(streamed.startedAt), 12);
    const res = await fetch(`${gw.url}/ds/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` },
      body: JSON.stringify({ model: 'deepseek-flash', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    recorder.flush();
    const native = recentRequests(recorder.store.db, { limit: 1 }).rows[0]!;
    expect(native).toMatchObject({ provider: 'ds', mode: 'native', cachedTokens: 8_000 });
    expect(native.cost).toBeCloseTo(flashCost(native.startedAt), 12);
  });

  it('an Anthropic-endpoint preset of the same account is billed at its preset\'s prices', async () => {
    const row = await ask('ds-claude/deepseek-flash');
    expect(row.cost).toBeCloseTo(flashCost(row.startedAt), 12);
  });

  it('xAI by its preset, with its own cached-input price', async () => {
    const row = await ask('grok/grok-4.7');
    expect(row.cost).toBeCloseTo((2_000 * 2 + 8_000 * 0.5 + 1_000 * 6) / 1e6, 12);
  });

  it('the user\'s usage.prices for <name>/<model> wins over the preset', async () => {
    const row = await ask('mine/deepseek-flash');
    expect(row.cost).toBeCloseTo((2_000 * 1 + 8_000 * 0.5 + 1_000 * 2) / 1e6, 12);
  });

  it('a model the preset does not list, or a preset sent elsewhere, is unpriced: cost unknown, never 0', async () => {
    expect((await ask('ds/deepseek-v9-unlisted')).cost).toBeNull();
    expect((await ask('proxied/deepseek-flash')).cost).toBeNull();
  });

  it('a local server costs 0', async () => {
    const row = await ask('box/qwen3:8b');
    expect(row).toMatchObject({ provider: 'box', inputTokens: 10_000, outputTokens: 1_000, cost: 0 });
  });

  it('the usage summary (gateway usage --json) counts the unpriced ones apart and sums the rest', async () => {
    recorder.flush();
    const s = summarize(recorder.store.db, { since: Date.now() - 3_600_000, until: Date.now() + 60_000, by: 'provider' }, recorder.prices);
    const byProvider = Object.fromEntries(s.rows.map((g) => [g.group, g]));
    expect(byProvider.ds).toMatchObject({ requests: 4, unpricedRequests: 1 });
    expect(byProvider.proxied).toMatchObject({ requests: 1, unpricedRequests: 1, cost: null });
    expect(byProvider.box).toMatchObject({ requests: 1, unpricedRequests: 0, cost: 0 });
    expect(byProvider.grok!.cost).toBeCloseTo(0.014, 6);
    expect(s.totals.unpricedRequests).toBe(2);
  });
});

describe('findPrice', () => {
  it('a built-in provider\'s shipped price is never taken for a preset\'s model, nor the other way', () => {
    expect(findPrice(table, 'openai', 'deepseek-flash')).toBeUndefined();
    expect(findPrice(table, 'anthropic', 'grok-4.7')).toBeUndefined();
  });
});
