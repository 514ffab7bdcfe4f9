// Session affinity with reasoning state (issue 20's scenario): a multi-turn tool conversation
// through the Messages door with the official Anthropic SDK, on a Gemini model whose fallback is a
// Claude model. The mocks are as strict as the real APIs: Anthropic answers 400 to a thinking
// block whose signature it did not mint, and to a tool_result with no matching tool_use just
// before it; Gemini answers 400 to a part whose thoughtSignature it did not mint, and (as Gemini 3
// does) to a step of the current turn whose first function call carries no thoughtSignature.
// Gemini starts failing (503) at turn 3, so the conversation moves to Claude; at turn 4 Gemini is
// healthy again, but the session stays on Claude for the breaker's cool-down (the tool loop Claude
// began is finished by Claude); a cool-down later (an injected clock) it goes back to Gemini. No
// turn may meet a 400 from either provider, and every answer's x-gateway-route shows where it went.
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ROUTING, type RoutingSettings } from '../../src/daemon/routing/settings.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import type { MockHandler, MockReply, Recorded } from '../helpers/mock-provider.js';

let gw: TestGateway | undefined;
afterEach(async () => { await gw?.close(); gw = undefined; });

const GEMINI = 'gemini/gemini-3.5-flash';
const CLAUDE = 'anthropic/claude-sonnet-4-5';
const COOLDOWN_MS = 30_000;
const routing: RoutingSettings = {
  ...DEFAULT_ROUTING,
  backoff: { baseMs: 20, maxMs: 50 },
  breaker: { ...DEFAULT_ROUTING.breaker, cooldownMs: COOLDOWN_MS },
  routes: { [GEMINI]: [GEMINI, CLAUDE] },
};

const json = (status: number, v: unknown): MockReply => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(v) });
const body = (r: Recorded) => JSON.parse(r.body.toString('utf8')) as Record<string, any>;
/** The city the conversation's last question names ("…in Paris?"). */
const cityOf = (text: string) => /in (\w+)\?/.exec(text)?.[1] ?? 'Paris';

/** A 400 a strict mock gave: which provider, and why. */
interface Refusal { provider: 'anthropic' | 'gemini'; message: string }

/**
 * Gemini as strict as the real API about thought signatures: it mints one per function call and
 * refuses any it did not mint, and a step of the current turn (after the last user text) whose
 * first function call has none. `down`: it answers 503 UNAVAILABLE instead.
 */
function strictGemini(refusals: Refusal[]): { handler: MockHandler; down: boolean } {
  const minted = new Set<string>();
  const state = {
    down: false,
    handler: ((r) => {
      const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent)/.exec(r.url);
      if (!m) return undefined;
      if (state.down) return json(503, { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } });
      const b = body(r);
      const contents = b.contents as Array<{ role: string; parts: Array<Record<string, any>> }>;
      const refuse = (message: string) => { refusals.push({ provider: 'gemini', message }); return json(400, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } }); };
      const turnStart = contents.findLastIndex((c) => c.role === 'user' && c.parts.some((p) => typeof p.text === 'string'));
      for (const [i, c] of contents.entries()) {
        for (const p of c.parts) {
          // Google's documented dummy for calls Gemini did not make passes validation, as on the real API.
          if (p.thoughtSignature !== undefined && p.thoughtSignature !== 'skip_thought_signature_validator' && !minted.has(p.thoughtSignature)) return refuse('Unable to submit request because Thought signature is not valid.');
        }
        // Gemini signs the first call of a step (parallel calls after it carry none).
        const call = c.parts.find((p) => p.functionCall);
        if (i > turnStart && call && call.thoughtSignature === undefined) {
          return refuse(`Unable to submit request because function call \`${call.functionCall.name}\` in the ${i + 1}. content block is missing a \`thought_signature\`.`);
        }
      }
      const last = contents.at(-1)!;
      const result = last.parts.find((p) => p.functionResponse)?.functionResponse;
      let parts: unknown[];
      if (result) parts = [{ text: `Gemini says: ${JSON.stringify(result.response)}` }];
      else {
        const signature = Buffer.from(`gemini-thought-${minted.size + 1}`).toString('base64');
        minted.add(signature);
        const question = [...contents].reverse().flatMap((c) => c.parts).find((p) => typeof p.text === 'string')?.text as string;
        parts = [{ functionCall: { id: `fc_${minted.size}`, name: 'get_weather', args: { city: cityOf(question) } }, thoughtSignature: signature }];
      }
      const resp = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 7, totalTokenCount: 47 }, modelVersion: m[1], responseId: 'resp-strict' };
      return m[2] === 'generateContent' ? json(200, resp) : { headers: { 'content-type': 'text/event-stream' }, chunks: [`data: ${JSON.stringify(resp)}\r\n\r\n`] };
    }) as MockHandler,
  };
  return state;
}

/**
 * Anthropic as strict as the real API: it mints a signature per thinking block and refuses a
 * thinking block whose signature it did not mint, and a tool_result whose tool_use is not in the
 * assistant message just before it. It thinks, then calls the tool; given the result, it answers.
 */
function strictAnthropic(refusals: Refusal[]): MockHandler {
  const minted = new Set<string>();
  return (r) => {
    if (!r.url.startsWith('/v1/messages')) return undefined;
    const b = body(r);
    const messages = b.messages as Array<{ role: string; content: string | Array<Record<string, any>> }>;
    const refuse = (message: string) => { refusals.push({ provider: 'anthropic', message }); return json(400, { type: 'error', error: { type: 'invalid_request_error', message } }); };
    for (const [i, m] of messages.entries()) {
      if (typeof m.content === 'string') continue;
      for (const [j, block] of m.content.entries()) {
        if (block.type === 'thinking' && !minted.has(block.signature)) return refuse(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
        if (block.type === 'redacted_thinking') return refuse(`messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`);
        if (block.type === 'tool_result') {
          const before = messages[i - 1];
          const called = before?.role === 'assistant' && Array.isArray(before.content) && before.content.some((c) => c.type === 'tool_use' && c.id === block.tool_use_id);
          if (!called) return refuse(`messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
        }
      }
    }
    const last = messages.at(-1)!;
    const result = Array.isArray(last.content) ? last.content.find((c) => c.type === 'tool_result') : undefined;
    let content: Array<Record<string, unknown>>;
    if (result) content = [{ type: 'text', text: `Claude says: ${typeof result.content === 'string' ? result.content : JSON.stringify(result.content)}` }];
    else {
      const signature = `EqClaudeSig${minted.size + 1}`;
      minted.add(signature);
      const question = typeof last.content === 'string' ? last.content : String(last.content.find((c) => c.type === 'text')?.text ?? '');
      content = [{ type: 'thinking', thinking: 'I should call the weather tool.', signature }, { type: 'tool_use', id: `toolu_${minted.size}`, name: 'get_weather', input: { city: cityOf(question) } }];
    }
    const message = { id: `msg_strict_${minted.size}`, type: 'message', role: 'assistant', model: b.model, content, stop_reason: result ? 'end_turn' : 'tool_use', stop_sequence: null, usage: { input_tokens: 40, output_tokens: 7 } };
    return b.stream === true ? anthropicStream(message) : json(200, message);
  };
}

/** A whole Messages answer as Anthropic streams it (a thinking block's signature in its signature_delta). */
function anthropicStream(message: { content: Array<Record<string, any>>; stop_reason: string } & Record<string, unknown>): MockReply {
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const chunks = [ev('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 40, output_tokens: 1 } } })];
  message.content.forEach((block, index) => {
    if (block.type === 'thinking') {
      chunks.push(ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
        ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } }),
        ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } }));
    } else if (block.type === 'tool_use') {
      chunks.push(ev('content_block_start', { index, content_block: { ...block, input: {} } }),
        ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }));
    } else {
      chunks.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }),
        ev('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } }));
    }
    chunks.push(ev('content_block_stop', { index }));
  });
  chunks.push(ev('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: 7 } }), ev('message_stop', {}));
  return { headers: { 'content-type': 'text/event-stream' }, chunks };
}

const weather: Anthropic.Tool = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const WEATHER: Record<string, string> = { Paris: '18°C, sunny', London: '12°C, rain', Rome: '24°C, clear' };

describe.each([
  { header: 'x-gateway-session', stream: false },
  { header: 'x-claude-code-session-id', stream: true },
])('a session named by $header (streamed: $stream) that falls back from Gemini to Claude at turn 3', ({ header, stream }) => {
  it('finishes its tool loop on Claude within the cool-down, goes back to Gemini after it, and meets no 400 on the way', async () => {
    let now = 1_000_000;
    gw = await startTestGateway({ clock: () => now, settings: { routing } });
    const refusals: Refusal[] = [];
    const gemini = strictGemini(refusals);
    gw.mocks.gemini.setHandler(gemini.handler);
    gw.mocks.anthropic.setHandler(strictAnthropic(refusals));
    const client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0, defaultHeaders: { [header]: `session-${header}` } });
    const messages: Anthropic.MessageParam[] = [];
    const routes: string[] = [];

    /** One request of the conversation with what it holds so far; the answer is appended as the client keeps it. */
    const turn = async (): Promise<Anthropic.Message> => {
      const params = { model: GEMINI, max_tokens: 1024, tools: [weather], messages };
      const { data, response } = stream
        ? await client.messages.stream(params).withResponse().then(async ({ data: s, response: r }) => ({ data: await s.finalMessage(), response: r }))
        : await client.messages.create(params).withResponse();
      routes.push(response.headers.get('x-gateway-route') ?? '(none)');
      messages.push({ role: 'assistant', content: data.content });
      return data;
    };
    const ask = async (question: string) => {
      messages.push({ role: 'user', content: question });
      const answer = await turn();
      expect(answer.stop_reason).toBe('tool_use');
      return answer.content.find((c): c is Anthropic.ToolUseBlock => c.type === 'tool_use')!;
    };
    const answerTool = async (call: Anthropic.ToolUseBlock) => {
      const city = (call.input as { city: string }).city;
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: `Weather in ${city}: ${WEATHER[city]}` }] });
      const answer = await turn();
      expect(answer.stop_reason).toBe('end_turn');
      return answer.content.filter((c): c is Anthropic.TextBlock => c.type === 'text').map((c) => c.text).join('');
    };

    // Turns 1 and 2 on Gemini: it calls the tool with a thought signature, then answers with its result.
    const paris = await ask('What is the weather in Paris?');
    expect(await answerTool(paris)).toContain('Gemini says:');
    // The signature Gemini minted went back to it with its call.
    expect(JSON.stringify(body(gw.mocks.gemini.requests.at(-1)!).contents)).toContain(Buffer.from('gemini-thought-1').toString('base64'));

    // Turn 3: Gemini is overloaded; after its retries Claude takes the turn and calls the tool itself.
    gemini.down = true;
    const geminiBefore = gw.mocks.gemini.requests.length;
    const london = await ask('And in London?');
    expect(gw.mocks.gemini.requests.length - geminiBefore).toBe(3);
    // Turn 4: Gemini is back, but the session stays on Claude, which finishes the loop it began.
    gemini.down = false;
    now += COOLDOWN_MS - 1_000;
    const geminiAtTurn4 = gw.mocks.gemini.requests.length;
    expect(await answerTool(london)).toBe('Claude says: Weather in London: 12°C, rain');
    expect(gw.mocks.gemini.requests).toHaveLength(geminiAtTurn4);
    // Claude was given its own signed thinking back, and none of Gemini's state.
    const claudeTurn4 = body(gw.mocks.anthropic.requests.at(-1)!);
    expect(JSON.stringify(claudeTurn4.messages)).toContain('EqClaudeSig1');
    expect(claudeTurn4.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((c: any) => c.type === 'thinking').map((c: any) => c.signature)).toEqual(['EqClaudeSig1']);

    // Turns 5 and 6, a cool-down after Claude last served it (each turn served renews the hold):
    // the session goes back to Gemini, which is given its own signatures only (Claude's thinking
    // stays with Claude, and its call lies in an earlier turn, where Gemini wants no signature).
    now += COOLDOWN_MS + 1_000;
    const rome = await ask('And in Rome?');
    expect(await answerTool(rome)).toContain('Gemini says:');

    expect(refusals).toEqual([]);
    const sig = (n: number) => Buffer.from(`gemini-thought-${n}`).toString('base64');
    expect(JSON.stringify(body(gw.mocks.gemini.requests.at(-1)!).contents)).toContain(sig(2));
    expect(JSON.stringify(body(gw.mocks.gemini.requests.at(-1)!).contents)).not.toContain('EqClaudeSig1');
    expect(routes).toEqual([
      `${GEMINI}=200`,
      `${GEMINI}=200`,
      `${GEMINI}=503, ${GEMINI}=503, ${GEMINI}=503, ${CLAUDE}=200`,
      `${CLAUDE}=200`,
      `${GEMINI}=200`,
      `${GEMINI}=200`,
    ]);
  });
});

describe('a tool loop Claude began, whose next turn falls back to Gemini', () => {
  it('is finished by Gemini without a 400: the call Claude made carries no signature Gemini would refuse', async () => {
    gw = await startTestGateway({ settings: { routing: { ...routing, routes: { [CLAUDE]: [CLAUDE, GEMINI] } } } });
    const refusals: Refusal[] = [];
    gw.mocks.gemini.setHandler(strictGemini(refusals).handler);
    const claude = strictAnthropic(refusals);
    let overloaded = false;
    gw.mocks.anthropic.setHandler((r, p) => (overloaded ? json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) : claude(r, p)));
    const client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0, defaultHeaders: { 'x-gateway-session': 'loop' } });
    const ask: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris?' };
    const first = await client.messages.create({ model: CLAUDE, max_tokens: 1024, tools: [weather], messages: [ask] });
    const call = first.content.find((c): c is Anthropic.ToolUseBlock => c.type === 'tool_use')!;
    overloaded = true;
    const { data, response } = await client.messages.create({
      model: CLAUDE, max_tokens: 1024, tools: [weather],
      messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Weather in Paris: 18°C, sunny' }] }],
    }).withResponse().catch((e: unknown) => { throw new Error(`${String(e)}; refusals: ${JSON.stringify(refusals)}`); });
    expect(refusals).toEqual([]);
    expect(data.content).toEqual([expect.objectContaining({ type: 'text', text: expect.stringContaining('Gemini says:') })]);
    expect(response.headers.get('x-gateway-route')).toBe(`${CLAUDE}=529, ${CLAUDE}=529, ${CLAUDE}=529, ${GEMINI}=200`);
  });
});
