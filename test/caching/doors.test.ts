// Automatic cache breakpoints through the doors whose clients cannot mark (Chat, Responses,
// Gemini), against the caching mock of Anthropic (test/helpers/anthropic-cache.ts), driven by each
// protocol's official SDK: an agent's tool loop over three turns, where from the second turn on
// most input tokens are cache reads and the client is told so in its own protocol's usage. And
// what must not change: Chat clients' own marks kept (4 at most in all), the Messages door's
// requests left as they came, no marks below the minimum or when config.json turns them off.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, type Content } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configuredProviders } from '../../src/providers/configured.js';
import { DEFAULT_CACHE, type CacheSettings } from '../../src/daemon/caching/settings.js';
import { anthropicCacheMock, type AnthropicCacheMock, type CachedTurn } from '../helpers/anthropic-cache.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';

const MODEL = 'anthropic/claude-sonnet-5';
/** A system prompt of about 3,000 tokens (the mock's count), as coding agents send. */
const SYSTEM = Array.from({ length: 300 }, (_, i) => `Rule ${i}: keep the code tidy and the tests honest.`).join('\n');
const TOOL = { name: 'read_file', description: 'Reads a file of the project and returns its text.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };

let gw: TestGateway;
let minimax: MockProvider; // an Anthropic-compatible provider added from the minimax-anthropic preset
let plain: MockProvider; // one added by hand, whose caching the gateway knows nothing of
let mock: AnthropicCacheMock;
let calls = 0;

/** The model: reads a file when the last turn is the user's question, answers once it has the result. */
function agent(body: Record<string, any>) {
  const last = body.messages.at(-1);
  const gotResult = Array.isArray(last.content) && last.content.some((c: any) => c.type === 'tool_result');
  return gotResult || !(body.tools ?? []).length
    ? [{ type: 'text', text: 'The file says hello.' }]
    : [{ type: 'tool_use', id: `toolu_${++calls}`, name: body.tools[0].name, input: { path: 'README.md' } }];
}

beforeAll(async () => {
  [minimax, plain] = await Promise.all([startMockProvider('anthropic', { key: 'sk-minimax-0123456789' }), startMockProvider('anthropic', { key: 'sk-plain-0123456789' })]);
  const { providers, problems } = configuredProviders({
    mm: { protocol: 'anthropic', baseUrl: minimax.origin, preset: 'minimax-anthropic' },
    plain: { protocol: 'anthropic', baseUrl: plain.origin },
  });
  expect(problems).toEqual([]);
  gw = await startTestGateway({ addedKeys: { mm: minimax.key, plain: plain.key }, settings: { providers } });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([minimax?.close(), plain?.close()]);
});
beforeEach(() => {
  mock = anthropicCacheMock({ answer: agent });
  gw.mocks.anthropic.setHandler(mock.handler);
  gw.daemon.ctx.settings.cache = DEFAULT_CACHE;
});

const setCache = (c: Partial<CacheSettings>) => { gw.daemon.ctx.settings.cache = { ...DEFAULT_CACHE, ...c }; };
const openai = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
const bodies = (m: MockProvider) => m.requests.map((r) => JSON.parse(r.body.toString('utf8')) as Record<string, any>);
/** Every cache_control the provider received, in reading order. */
function marksIn(b: Record<string, any>): unknown[] {
  const blocks = [...(b.tools ?? []), ...(Array.isArray(b.system) ? b.system : []), ...b.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))];
  return blocks.flatMap((x: any) => [x.cache_control, ...(Array.isArray(x.content) ? x.content.map((c: any) => c.cache_control) : [])]).filter((c) => c !== undefined);
}
const readShare = (t: CachedTurn) => t.usage.cache_read_input_tokens / t.total;

/** Turn 2 and 3 read what the turn before wrote: the whole conversation up to its end. */
function expectWarmCache(turns: CachedTurn[]): void {
  expect(turns).toHaveLength(3);
  expect(turns[0]!.usage.cache_read_input_tokens).toBe(0);
  expect(turns[0]!.usage.cache_creation_input_tokens).toBeGreaterThan(3000);
  for (const i of [1, 2]) {
    const before = turns[i - 1]!.usage;
    expect(turns[i]!.usage.cache_read_input_tokens).toBe(before.cache_read_input_tokens + before.cache_creation_input_tokens);
    expect(readShare(turns[i]!)).toBeGreaterThan(0.9);
  }
}

describe('a tool loop on a Claude model through each door, its cache warm from the second turn', () => {
  it('the Chat door (OpenAI SDK), streamed and not: the client sees the reads as cached_tokens', async () => {
    for (const stream of [false, true]) {
      mock = anthropicCacheMock({ answer: agent });
      gw.mocks.anthropic.setHandler(mock.handler);
      const tools = [{ type: 'function' as const, function: TOOL }];
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: SYSTEM }, { role: 'user', content: `What does README.md say? (${stream ? 'streamed' : 'whole'})` }];
      const cached: number[] = [];
      for (let turn = 0; turn < 3; turn++) {
        let message: OpenAI.ChatCompletionMessage;
        if (stream) {
          const s = openai().chat.completions.stream({ model: MODEL, messages, tools, stream_options: { include_usage: true } });
          const done = await s.finalChatCompletion();
          message = done.choices[0]!.message;
          cached.push(done.usage?.prompt_tokens_details?.cached_tokens ?? -1);
        } else {
          const done = await openai().chat.completions.create({ model: MODEL, messages, tools });
          message = done.choices[0]!.message;
          cached.push(done.usage?.prompt_tokens_details?.cached_tokens ?? -1);
        }
        messages.push(message as OpenAI.ChatCompletionAssistantMessageParam);
        const call = message.tool_calls?.[0];
        messages.push(call ? { role: 'tool', tool_call_id: call.id, content: 'hello from the readme' } : { role: 'user', content: 'Read it again, please.' });
      }
      expectWarmCache(mock.turns);
      expect(cached).toEqual(mock.turns.map((t) => t.usage.cache_read_input_tokens));
    }
  });

  it('the Responses door (OpenAI SDK): the reads are its input_tokens_details.cached_tokens', async () => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'What does README.md say?' }];
    const cached: number[] = [];
    for (let turn = 0; turn < 3; turn++) {
      const r = await openai().responses.create({ model: MODEL, instructions: SYSTEM, input, store: false, tools: [{ type: 'function', strict: false, ...TOOL }] });
      cached.push(r.usage?.input_tokens_details.cached_tokens ?? -1);
      const call = r.output.find((o) => o.type === 'function_call');
      input.push(...(r.output as OpenAI.Responses.ResponseInputItem[]));
      input.push(call ? { type: 'function_call_output', call_id: call.call_id, output: 'hello from the readme' } : { role: 'user', content: 'Read it again, please.' });
    }
    expectWarmCache(mock.turns);
    expect(cached).toEqual(mock.turns.map((t) => t.usage.cache_read_input_tokens));
  });

  it('the Gemini door (Google GenAI SDK): the reads are its cachedContentTokenCount', async () => {
    const ai = new GoogleGenAI({ apiKey: gw.key, httpOptions: { baseUrl: gw.url } });
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'What does README.md say?' }] }];
    const cached: number[] = [];
    for (let turn = 0; turn < 3; turn++) {
      const r = await ai.models.generateContent({ model: MODEL, contents, config: { systemInstruction: SYSTEM, tools: [{ functionDeclarations: [{ name: TOOL.name, description: TOOL.description, parametersJsonSchema: TOOL.parameters }] }] } });
      cached.push(r.usageMetadata?.cachedContentTokenCount ?? 0);
      const said = r.candidates![0]!.content!;
      contents.push(said);
      const call = said.parts?.find((p) => p.functionCall)?.functionCall;
      contents.push(call ? { role: 'user', parts: [{ functionResponse: { name: call.name!, id: call.id!, response: { output: 'hello from the readme' } } }] } : { role: 'user', parts: [{ text: 'Read it again, please.' }] });
    }
    expectWarmCache(mock.turns);
    expect(cached).toEqual(mock.turns.map((t) => t.usage.cache_read_input_tokens));
  });
});

describe('marks the client sent on Chat content parts', () => {
  const part = (text: string) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } });
  const chat = (system: unknown[], extra: Record<string, unknown> = {}) =>
    openai().chat.completions.create({ model: MODEL, messages: [{ role: 'system', content: system as OpenAI.ChatCompletionContentPartText[] }, { role: 'user', content: 'Hello?' }], ...extra });

  it('are kept where they are, and a request with 3 of them gets at most 1 more', async () => {
    await chat([part(SYSTEM), part('Second part.'), part('Third part.')]);
    const sent = bodies(gw.mocks.anthropic).at(-1)!;
    expect(sent.system.map((s: any) => s.cache_control)).toEqual([{ type: 'ephemeral' }, { type: 'ephemeral' }, { type: 'ephemeral' }]);
    expect(marksIn(sent)).toHaveLength(4);
    expect(sent.messages.at(-1).content.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    expect(mock.turns.at(-1)!.usage.cache_creation_input_tokens).toBeGreaterThan(3000);
  });

  it('4 of them get none more, and 5 are refused by Anthropic with its own message, in the Chat error shape', async () => {
    await chat([part(SYSTEM), part('2'), part('3'), part('4')]);
    expect(marksIn(bodies(gw.mocks.anthropic).at(-1)!)).toHaveLength(4);
    const err = await chat([part(SYSTEM), part('2'), part('3'), part('4'), part('5')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('A maximum of 4 blocks with cache_control may be provided. Found 5.');
  });

  it('a 1-hour mark is kept, and the gateway\'s own after it are 5-minute ones or also 1-hour, never out of order', async () => {
    await chat([{ ...part(SYSTEM), cache_control: { type: 'ephemeral', ttl: '1h' } }]);
    const marks = marksIn(bodies(gw.mocks.anthropic).at(-1)!) as Array<{ ttl?: string }>;
    expect(marks[0]).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(marks.length).toBeGreaterThan(1);
    expect(mock.turns.at(-1)!.usage.cache_creation.ephemeral_1h_input_tokens).toBeGreaterThan(3000);
  });

  it('a malformed one is refused with a 400 naming it', async () => {
    const err = await chat([{ type: 'text', text: 'x', cache_control: { type: 'forever' } }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.message).toContain('messages[0].content[0].cache_control must be {"type": "ephemeral"}');
    expect((e.error as { param?: string }).param).toBe('messages[0].content[0].cache_control');
  });
});

describe('where the gateway adds no marks', () => {
  it('below the model\'s minimum', async () => {
    await openai().chat.completions.create({ model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello?' }] });
    expect(marksIn(bodies(gw.mocks.anthropic).at(-1)!)).toEqual([]);
  });

  it('on the Messages door: a Claude client\'s request goes as it came, marks or none', async () => {
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    const before = gw.mocks.anthropic.requests.length;
    await anthropic.messages.create({ model: MODEL, max_tokens: 64, system: SYSTEM, messages: [{ role: 'user', content: 'Hello?' }] });
    await anthropic.messages.create({ model: MODEL, max_tokens: 64, system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'Hello?' }] });
    const [unmarked, marked] = bodies(gw.mocks.anthropic).slice(before);
    expect(marksIn({ ...unmarked!, system: [] })).toEqual([]);
    expect(marksIn(marked!)).toEqual([{ type: 'ephemeral' }]);
  });

  it('when config.json turns them off, for all providers or for one; its TTL is config.json\'s', async () => {
    const ask = () => openai().chat.completions.create({ model: MODEL, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Hello?' }] });
    setCache({ breakpoints: false });
    await ask();
    expect(marksIn(bodies(gw.mocks.anthropic).at(-1)!)).toEqual([]);
    setCache({ providers: { anthropic: { breakpoints: false } } });
    await ask();
    expect(marksIn(bodies(gw.mocks.anthropic).at(-1)!)).toEqual([]);
    setCache({ breakpoints: false, providers: { anthropic: { breakpoints: true, ttl: '1h' } } });
    await ask();
    expect(marksIn(bodies(gw.mocks.anthropic).at(-1)!)).toEqual([{ type: 'ephemeral', ttl: '1h' }, { type: 'ephemeral', ttl: '1h' }]);
    expect(mock.turns.at(-1)!.usage.cache_creation.ephemeral_1h_input_tokens).toBeGreaterThan(3000);
    setCache({ ttl: '1h' });
    await ask();
    expect(marksIn(bodies(gw.mocks.anthropic).at(-1)!)).toEqual([{ type: 'ephemeral', ttl: '1h' }, { type: 'ephemeral', ttl: '1h' }]);
    expect(mock.turns.at(-1)!.usage.cache_read_input_tokens).toBeGreaterThan(3000);
  });
});

describe('Anthropic-compatible providers the user added', () => {
  const ask = (model: string) => openai().chat.completions.create({ model, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Hello?' }] });

  it('one from a preset that caches by breakpoints (MiniMax\'s) gets them; one the gateway knows nothing of does not, unless config.json says so', async () => {
    await ask('mm/MiniMax-M2.7');
    expect(marksIn(bodies(minimax).at(-1)!)).toEqual([{ type: 'ephemeral' }, { type: 'ephemeral' }]);
    await ask('plain/some-model');
    expect(marksIn(bodies(plain).at(-1)!)).toEqual([]);
    setCache({ providers: { plain: { breakpoints: true } } });
    await ask('plain/some-model');
    expect(marksIn(bodies(plain).at(-1)!)).toEqual([{ type: 'ephemeral' }, { type: 'ephemeral' }]);
  });

  it('a Messages request to one keeps the client\'s own marks, and gets none added', async () => {
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    const system = [{ type: 'text' as const, text: SYSTEM, cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }];
    await anthropic.messages.create({ model: 'mm/MiniMax-M2.7', max_tokens: 64, system, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello?' }] }] });
    const sent = bodies(minimax).at(-1)!;
    expect(sent.system).toEqual(system);
    expect(marksIn(sent)).toEqual([{ type: 'ephemeral', ttl: '1h' }]);
  });
});
