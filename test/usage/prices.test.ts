// Cost: the price table's lookups and arithmetic, then every provider end to end — a real daemon,
// mock providers reporting cached and reasoning tokens, and the row the recorder writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPriceTable, cacheSavingsOf, costOf, findPrice, readShippedPrices, requestCost } from '../../src/daemon/observe/usage/prices.js';
import { openUsageHistory, recordUsage, type UsageRecorder } from '../../src/daemon/observe/usage/index.js';
import { recentRequests } from '../../src/daemon/observe/usage/queries.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const shipped = readShippedPrices() as { date: string; models: Record<string, unknown> };
const table = buildPriceTable(shipped).table;

describe('the price table', () => {
  it('ships dated prices that all parse', () => {
    const { problems } = buildPriceTable(shipped);
    expect(problems).toEqual([]);
    expect(shipped.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(table.models.size).toBe(Object.keys(shipped.models).length);
  });

  it('finds models by exact id, then without a release date; never by guess', () => {
    expect(findPrice(table, 'anthropic', 'claude-sonnet-4-5-20250929')?.key).toBe('anthropic/claude-sonnet-4-5');
    expect(findPrice(table, 'openai', 'gpt-4o-2024-08-06')?.key).toBe('openai/gpt-4o');
    expect(findPrice(table, 'openai', 'gpt-4o-2024-05-13')?.price.input).toBe(5); // a snapshot with its own price wins
    expect(findPrice(table, 'gemini', 'models/gemini-2.5-flash')?.key).toBe('gemini/gemini-2.5-flash');
    expect(findPrice(table, 'anthropic', 'anthropic/claude-haiku-4-5')?.key).toBe('anthropic/claude-haiku-4-5');
    expect(findPrice(table, 'openai', 'gpt-4o-audio-preview')).toBeUndefined(); // not gpt-4o's price
    expect(findPrice(table, 'openai', 'claude-sonnet-4-5')).toBeUndefined(); // wrong provider
    expect(findPrice(table, 'gemini', null)).toBeUndefined();
  });

  it('prices cache reads, cache writes, output with reasoning, and long-context tiers', () => {
    const sonnet = findPrice(table, 'anthropic', 'claude-sonnet-4-5')!.price;
    // 4,500 input of which 3,000 cache reads and 500 cache writes; 800 output (incl. thinking)
    expect(costOf(sonnet, { inputTokens: 4500, cachedTokens: 3000, cacheWriteTokens: 500, outputTokens: 800, reasoningTokens: 300 }))
      .toBeCloseTo((1000 * 3 + 3000 * 0.3 + 500 * 3.75 + 800 * 15) / 1e6, 12);
    // above 200k input tokens the long-context tier applies to the whole request
    expect(costOf(sonnet, { inputTokens: 250_000, outputTokens: 1000 })).toBeCloseTo((250_000 * 6 + 1000 * 22.5) / 1e6, 12);
    const gpt = findPrice(table, 'openai', 'gpt-4o')!.price;
    expect(costOf(gpt, { inputTokens: 1000, cachedTokens: 400, outputTokens: 300, reasoningTokens: 100 })).toBeCloseTo((600 * 2.5 + 400 * 1.25 + 300 * 10) / 1e6, 12);
    const old = findPrice(table, 'openai', 'gpt-4o-2024-05-13')!.price; // no cached price: cache reads at the input price
    expect(costOf(old, { inputTokens: 1000, cachedTokens: 1000, outputTokens: 0 })).toBeCloseTo(1000 * 5 / 1e6, 12);
  });

  it('prices each part of a cached turn at its own rate: 5-minute and 1-hour writes apart, falling back to 1.25× and 2× the input price', () => {
    // 1,540 input tokens: 40 uncached, 1,200 cache reads, 300 writes of which 200 for an hour; 30 out.
    const turn = { inputTokens: 1540, cachedTokens: 1200, cacheWriteTokens: 300, cacheWrite1hTokens: 200, outputTokens: 30 };
    const opus = findPrice(table, 'anthropic', 'claude-opus-4-6')!.price; // input 5, cached 0.5, 5-minute write 6.25, no 1-hour price
    expect(opus.cacheWrite1h).toBeUndefined();
    expect(costOf(opus, turn)).toBeCloseTo((40 * 5 + 1200 * 0.5 + 100 * 6.25 + 200 * 10 + 30 * 25) / 1e6, 12);
    // What the cache saved: the 1,500 cached tokens at the input price, less what they were billed.
    expect(cacheSavingsOf(opus, turn)).toBeCloseTo((1500 * 5 - (1200 * 0.5 + 100 * 6.25 + 200 * 10)) / 1e6, 12);
    // An entry without cache prices: reads at the input price (never guessed), writes at the multiples.
    const bare = { input: 4, output: 8 };
    expect(costOf(bare, turn)).toBeCloseTo((40 * 4 + 1200 * 4 + 100 * 5 + 200 * 8 + 30 * 8) / 1e6, 12);
    expect(cacheSavingsOf(bare, turn)).toBeCloseTo((100 * (4 - 5) + 200 * (4 - 8)) / 1e6, 12); // writes only cost more
    // Writes whose TTL was not reported are 5-minute ones.
    expect(costOf(opus, { inputTokens: 1000, cacheWriteTokens: 1000, outputTokens: 0 })).toBeCloseTo(1000 * 6.25 / 1e6, 12);
  });

  it('takes every cache rate from config, the 1-hour write included', () => {
    const { table: t, problems } = buildPriceTable(shipped, {
      'anthropic/claude-opus-4-6': { input: 5, output: 25, cachedInput: 0.4, cacheWrite: 6, cacheWrite1h: 9 },
      'anthropic/claude-bad': { input: 5, output: 25, cacheWrite1h: 'double' },
    });
    expect(problems).toEqual([expect.stringMatching(/claude-bad: .*"cacheWrite1h"/)]);
    const opus = findPrice(t, 'anthropic', 'claude-opus-4-6')!.price;
    expect(requestCost(t, 'anthropic', 'claude-opus-4-6', { inputTokens: 1540, cachedTokens: 1200, cacheWriteTokens: 300, cacheWrite1hTokens: 200, outputTokens: 30 }, 200))
      .toBeCloseTo((40 * 5 + 1200 * 0.4 + 100 * 6 + 200 * 9 + 30 * 25) / 1e6, 12);
    expect(opus.cacheWrite1h).toBe(9);
  });

  it('records unknown as null: unknown model, or success without token counts', () => {
    expect(requestCost(table, 'openai', 'gpt-9-unlisted', { inputTokens: 10, outputTokens: 10 }, 200)).toBeNull();
    expect(requestCost(table, 'openai', 'gpt-4o', {}, 200)).toBeNull();
    expect(requestCost(table, 'openai', 'gpt-4o', {}, 500)).toBe(0); // a refused request reported nothing to bill
    expect(requestCost(table, 'openai', 'gpt-4o', { inputTokens: 10, outputTokens: 0 }, 200)).toBeCloseTo(25 / 1e6, 12);
  });

  it('takes overrides and additions from config, and reports bad entries', () => {
    const { table: t, problems } = buildPriceTable(shipped, {
      'openai/gpt-5.4': { input: 2, output: 16, cachedInput: 0.2 },
      'google/gemini-9': { input: 1, output: 2 },
      'anthropic/claude-sonnet-4-5': { input: 1, output: 1 },
      'openai/bad': { input: 'cheap' },
      'nobody/model': { input: 1, output: 1 },
    });
    expect(t.overrides).toBe(3);
    expect(findPrice(t, 'openai', 'gpt-5.4')?.price.output).toBe(16);
    expect(findPrice(t, 'gemini', 'gemini-9')).toBeDefined();
    expect(findPrice(t, 'anthropic', 'claude-sonnet-4-5')?.price.input).toBe(1);
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toMatch(/openai\/bad: needs numeric "input"/);
  });

  it('says which fields of an entry are no price (a misspelt rate would price its tokens at another one), and uses the rest', () => {
    const { table: t, problems } = buildPriceTable(shipped, {
      'openai/gpt-typo': { input: 2, output: 8, cachedinput: 0.2 },
      'openai/gpt-tiers': { input: 2, output: 8, longContext: { above: 200_000, input: 4, output: 16, cachedInput: 0.4, outputs: 1 } },
      'openai/gpt-ok': { input: 2, output: 8, cachedInput: 0.2, longContext: { above: 200_000, input: 4, output: 16 } },
    });
    expect(problems).toEqual([
      'config usage.prices: openai/gpt-typo: "cachedinput" is not a price field (known: input, output, cachedInput, cacheWrite, cacheWrite1h, longContext, peak): ignored',
      'config usage.prices: openai/gpt-tiers: "longContext.outputs" is not a price field (known: input, output, cachedInput, cacheWrite, cacheWrite1h, longContext, peak): ignored',
    ]);
    expect(findPrice(t, 'openai', 'gpt-typo')?.price).toEqual({ input: 2, output: 8 });
    expect(findPrice(t, 'openai', 'gpt-tiers')?.price.longContext).toEqual({ above: 200_000, input: 4, output: 16, cachedInput: 0.4 });
    expect(findPrice(t, 'openai', 'gpt-ok')?.price.cachedInput).toBe(0.2);
  });
});

/** A Chat Completions server that bills cache writes and reports them (OpenRouter does). */
const CACHE_WRITER_PRICE = { input: 2, cachedInput: 0.2, cacheWrite: 2.5, output: 8 };
const CACHE_WRITES = { prompt_tokens: 3000, completion_tokens: 100, total_tokens: 3100, prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 1500 } };
function cacheWriterAnswer(stream: boolean) {
  const base = { id: 'c2', created: 1, model: 'gpt-cache-writer' };
  if (!stream) {
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: CACHE_WRITES }) };
  }
  const chunks = [
    { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] },
    { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { ...base, object: 'chat.completion.chunk', choices: [], usage: CACHE_WRITES },
  ];
  return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n' };
}

describe('each provider end to end: reported tokens → recorded row and cost', () => {
  let gw: TestGateway;
  let recorder: UsageRecorder;
  beforeAll(async () => {
    gw = await startTestGateway();
    const history = await openUsageHistory({ dir: gw.dir, config: { prices: { 'openai/gpt-5.4': { input: 2, output: 16 }, 'openai/gpt-cache-writer': CACHE_WRITER_PRICE } }, log: () => {} });
    recorder = recordUsage(history, gw.daemon.ctx.bus, () => {});
    const json = (body: unknown) => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    gw.mocks.anthropic.setHandler((r) => (r.url.startsWith('/v1/messages') ? json({
      id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn', stop_sequence: null,
      usage: { input_tokens: 1000, cache_read_input_tokens: 3000, cache_creation_input_tokens: 500, output_tokens: 800 },
    }) : undefined));
    gw.mocks.openai.setHandler((r) => {
      if (r.url !== '/v1/chat/completions') return undefined;
      const asked = JSON.parse(r.body.toString('utf8')) as { model?: string; stream?: boolean };
      if (asked.model === 'gpt-cache-writer') return cacheWriterAnswer(asked.stream === true);
      return json({
        id: 'c1', object: 'chat.completion', created: 1, model: 'o4-mini-2025-04-16',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 2000, completion_tokens: 1500, total_tokens: 3500, prompt_tokens_details: { cached_tokens: 1024 }, completion_tokens_details: { reasoning_tokens: 1000 } },
      });
    });
    gw.mocks.gemini.setHandler((r) => (r.url.includes(':generateContent') ? json({
      candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 5000, cachedContentTokenCount: 4000, candidatesTokenCount: 300, thoughtsTokenCount: 700, totalTokenCount: 6000 },
      modelVersion: 'gemini-2.5-flash',
    }) : undefined));
  });
  afterAll(async () => { await recorder?.close(); await gw?.close(); });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => fetch(`${gw.url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, ...headers }, body: JSON.stringify(body),
  });
  const lastRow = () => { recorder.flush(); return recentRequests(recorder.store.db, { limit: 1 }).rows[0]!; };

  it('Anthropic (native): cache reads and writes', async () => {
    expect((await post('/anthropic/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    const r = lastRow();
    expect(r).toMatchObject({ provider: 'anthropic', mode: 'native', model: 'claude-sonnet-4-5-20250929', inputTokens: 4500, cachedTokens: 3000, cacheWriteTokens: 500, outputTokens: 800 });
    expect(r.cost).toBeCloseTo((1000 * 3 + 3000 * 0.3 + 500 * 3.75 + 800 * 15) / 1e6, 12);
  });

  it('Anthropic (unified): the same usage through the translator', async () => {
    expect((await post('/v1/chat/completions', { model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    const r = lastRow();
    expect(r).toMatchObject({ provider: 'anthropic', mode: 'unified', inputTokens: 4500, cachedTokens: 3000, cacheWriteTokens: 500, outputTokens: 800 });
    expect(r.cost).toBeCloseTo((1000 * 3 + 3000 * 0.3 + 500 * 3.75 + 800 * 15) / 1e6, 12);
  });

  it('OpenAI (native): cached prompt tokens and reasoning tokens (billed as output, once)', async () => {
    expect((await post('/openai/v1/chat/completions', { model: 'o4-mini', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    const r = lastRow();
    expect(r).toMatchObject({ provider: 'openai', model: 'o4-mini-2025-04-16', inputTokens: 2000, cachedTokens: 1024, outputTokens: 1500, reasoningTokens: 1000 });
    expect(r.cost).toBeCloseTo((976 * 1.1 + 1024 * 0.275 + 1500 * 4.4) / 1e6, 12);
  });

  it('an OpenAI Chat provider\'s cache writes: the same row natively and translated (whole and streamed)', async () => {
    const cost = (500 * 2 + 1000 * 0.2 + 1500 * 2.5 + 100 * 8) / 1e6;
    const counts = { provider: 'openai', model: 'gpt-cache-writer', inputTokens: 3000, cachedTokens: 1000, cacheWriteTokens: 1500, outputTokens: 100 };
    const ask = { model: 'gpt-cache-writer', messages: [{ role: 'user', content: 'hi' }] };
    expect((await post('/openai/v1/chat/completions', ask)).status).toBe(200);
    expect(lastRow()).toMatchObject({ ...counts, mode: 'native' });
    expect(lastRow().cost).toBeCloseTo(cost, 12);
    // A Messages client asking for the same model: its request is translated into Chat Completions.
    const viaMessages = { ...ask, model: 'openai/gpt-cache-writer', max_tokens: 10 };
    expect((await post('/v1/messages', viaMessages)).status).toBe(200);
    expect(lastRow()).toMatchObject({ ...counts, mode: 'messages' });
    expect(lastRow().cost).toBeCloseTo(cost, 12);
    const streamed = await post('/v1/messages', { ...viaMessages, stream: true });
    expect(await streamed.text()).toContain('message_stop');
    await expect.poll(() => lastRow().stream).toBe(true);
    expect(lastRow()).toMatchObject({ ...counts, mode: 'messages' });
    expect(lastRow().cost).toBeCloseTo(cost, 12);
  });

  it('Gemini (native): cached content and thoughts', async () => {
    expect((await post('/gemini/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ parts: [{ text: 'hi' }] }] }, { 'x-goog-api-key': gw.key })).status).toBe(200);
    const r = lastRow();
    expect(r).toMatchObject({ provider: 'gemini', model: 'gemini-2.5-flash', inputTokens: 5000, cachedTokens: 4000, outputTokens: 1000, reasoningTokens: 700 });
    expect(r.cost).toBeCloseTo((1000 * 0.3 + 4000 * 0.03 + 1000 * 2.5) / 1e6, 12);
  });

  it('Gemini (unified): thoughts count as output there too', async () => {
    expect((await post('/v1/chat/completions', { model: 'gemini/gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    const r = lastRow();
    expect(r).toMatchObject({ provider: 'gemini', mode: 'unified', inputTokens: 5000, cachedTokens: 4000, outputTokens: 1000, reasoningTokens: 700 });
    expect(r.cost).toBeCloseTo((1000 * 0.3 + 4000 * 0.03 + 1000 * 2.5) / 1e6, 12);
  });

  it('a model missing from the table is recorded with cost unknown; a config price makes it known', async () => {
    gw.mocks.openai.setHandler(undefined); // the mock's default answer: model as requested
    await post('/openai/v1/chat/completions', { model: 'gpt-5.5-preview', messages: [{ role: 'user', content: 'hi' }] });
    expect(lastRow()).toMatchObject({ model: 'gpt-5.5-preview', inputTokens: 12, cost: null });
    await post('/openai/v1/chat/completions', { model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] });
    const r = lastRow();
    expect(r.model).toBe('gpt-5.4');
    expect(r.cost).toBeCloseTo((12 * 2 + r.outputTokens! * 16) / 1e6, 12);
  });
});
