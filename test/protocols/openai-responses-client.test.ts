// The Responses client module on its own (the door's side): requests recorded from Codex CLI
// itself (0.169, `codex exec` with an MCP server, captured by a loopback server standing in as its
// Responses provider) parsed into the IR; and what it renders read back, both as a client resends
// it (output items as the next input: reasoning state and tool-call state survive) and by the
// Responses reader of the provider side, however the rendered stream's bytes are split.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SseParser } from '../../src/daemon/http/sse.js';
import type { RenderContext, Target } from '../../src/providers/ir/protocol.js';
import type { AssistantPart, StreamEvent } from '../../src/providers/ir/types.js';
import { openaiResponsesClient as client } from '../../src/providers/protocols/openai-responses/client/index.js';
import { openaiResponsesProvider } from '../../src/providers/protocols/openai-responses/provider/index.js';
import { TranslationError } from '../../src/providers/types.js';

const FIXTURES = new URL('../fixtures/protocols/openai-responses-client/', import.meta.url);
const fixture = (name: string): Record<string, any> => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8'));
const CLAUDE: Target = { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-sonnet-4-5', protocol: 'anthropic' };
const GEMINI: Target = { provider: 'gemini', displayName: 'Gemini', model: 'gemini-3.5-flash', protocol: 'gemini' };
const codexFirst = fixture('codex-first.request.json');
const codexToolResult = fixture('codex-tool-result.request.json');

const ctx = (echo: Record<string, unknown>): RenderContext => ({ model: 'anthropic/claude-sonnet-4-5', created: 1_790_000_000, fallbackId: 'resp_test1', includeUsage: false, echo });

describe('what Codex CLI sends, parsed for a model that is not OpenAI\'s', () => {
  it('its first turn: developer messages become the system prompt, namespace tools are qualified, nothing it always sends is refused', () => {
    // The recording has what makes a 400 likely: store false, include, prompt_cache_key, client_metadata, namespaces.
    expect(codexFirst).toMatchObject({ store: false, include: ['reasoning.encrypted_content'], stream: true, parallel_tool_calls: true });
    expect(codexFirst.prompt_cache_key).toEqual(expect.any(String));
    expect(codexFirst.client_metadata).toEqual(expect.any(Object));
    const ir = client.parseRequest(codexFirst, CLAUDE);
    const developer = codexFirst.input.filter((i: any) => i.role === 'developer').flatMap((i: any) => i.content.map((c: any) => c.text));
    expect(ir.system.map((s) => s.text)).toEqual(developer);
    expect(ir.messages).toHaveLength(1);
    expect(ir.messages[0]!.parts.at(-1)).toEqual({ type: 'text', text: 'What is the weather in Paris? Use the weather tool.' });
    const names = ir.tools.map((t) => t.name);
    expect(names).toContain('mcp__weather__get_weather');
    expect(names).toContain('multi_agent_v1__spawn_agent');
    expect(names.every((n) => /^[a-zA-Z0-9_-]{1,128}$/.test(n))).toBe(true);
    const weather = ir.tools.find((t) => t.name === 'mcp__weather__get_weather')!;
    expect(weather.inputSchema).toMatchObject({ type: 'object', properties: { city: expect.any(Object) } });
    expect(ir).toMatchObject({ stream: true, parallelToolCalls: true, toolChoice: { type: 'auto' } });
  });

  it('its second turn: the call it got back and the MCP output (a list of input_text parts) are one tool round trip', () => {
    const ir = client.parseRequest(codexToolResult, GEMINI);
    const [assistant, results] = ir.messages.slice(-2);
    expect(assistant!.role).toBe('assistant');
    const call = assistant!.parts.find((p) => p.type === 'tool-call')!;
    expect(call).toMatchObject({ id: 'call_cap1', name: 'mcp__weather__get_weather', arguments: '{"city":"Paris"}' });
    // OpenAI's own encrypted reasoning is kept tagged as OpenAI's: a Gemini builder will not send it.
    expect(assistant!.parts.find((p) => p.type === 'reasoning')).toMatchObject({ text: 'Checking the weather.', state: { provider: 'openai' } });
    expect(results!.parts).toEqual([expect.objectContaining({
      type: 'tool-result', callId: 'call_cap1', name: 'mcp__weather__get_weather',
      content: [{ type: 'text', text: 'Wall time: 0.0054 seconds\nOutput:' }, { type: 'text', text: 'Weather in Paris: 18°C, sunny (MCP)' }],
    })]);
  });

  it('an OpenAI-only built-in tool the request cannot do without is refused by name; one it merely offers is left out', () => {
    const forced = { ...codexFirst, tools: [...codexFirst.tools, { type: 'file_search', vector_store_ids: ['vs_1'] }] };
    const err = (() => { try { client.parseRequest(forced, CLAUDE); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(TranslationError);
    expect((err as TranslationError).message).toMatch(/file_search/);
    const offered = { ...codexFirst, tools: [...codexFirst.tools, { type: 'web_search' }] };
    expect(client.parseRequest(offered, CLAUDE).tools.map((t) => t.name)).not.toContain('web_search');
  });
});

/** One Claude turn with everything a Codex tool round trip carries: signed thinking, text, a namespaced call. */
const TURN: StreamEvent[] = [
  { type: 'start', id: 'msg_01', model: 'claude-sonnet-4-5-20250929', usage: { inputTokens: 40, outputTokens: 1 } },
  { type: 'reasoning', text: 'The user wants the weather; ' },
  { type: 'reasoning', text: 'I will call the tool.' },
  { type: 'reasoning-end', state: { provider: 'anthropic', data: { signature: 'EqCLAUDESIG+/=' } } },
  { type: 'text', text: 'Let me check — ' },
  { type: 'text', text: 'un momento. ☀️' },
  { type: 'tool-call-start', id: 'toolu_01', name: 'mcp__weather__get_weather' },
  { type: 'tool-call-arguments', id: 'toolu_01', delta: '{"city":' },
  { type: 'tool-call-arguments', id: 'toolu_01', delta: '"Paris"}' },
  { type: 'tool-call-end', id: 'toolu_01' },
  { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 40, outputTokens: 17 } },
];

function rendered(events: StreamEvent[], echo: Record<string, unknown>): { sse: string; final: Record<string, any> | undefined } {
  let final: Record<string, any> | undefined;
  const r = client.createStreamRenderer({ ...ctx(echo), onFinal: (a) => { final = a; } });
  const sse = events.map((e) => r.push(e)).join('') + r.end();
  return { sse, final };
}

/** The parts a client resending the answer's output items gives the next request, for `target`. */
function resent(output: unknown[], target: Target): AssistantPart[] {
  const next = { model: 'x', input: [{ role: 'user', content: 'weather?' }, ...output, { type: 'function_call_output', call_id: (output.find((o: any) => o.type === 'function_call') as any)?.call_id, output: '18°C' }], tools: codexFirst.tools, store: false };
  const ir = client.parseRequest(next, target);
  const assistant = ir.messages.find((m) => m.role === 'assistant');
  return (assistant?.parts ?? []) as AssistantPart[];
}

describe('what the door renders, read back', () => {
  it('a stateless client resending the streamed output items gives Claude its signed thinking and the call\'s own id back', () => {
    const { final } = rendered(TURN, codexFirst);
    expect(final?.status).toBe('completed');
    const call = final!.output.find((o: any) => o.type === 'function_call');
    // Rendered as Codex knows the tool: its namespace and its own name.
    expect(call).toMatchObject({ namespace: 'mcp__weather', name: 'get_weather', arguments: '{"city":"Paris"}' });
    const parts = resent(final!.output, CLAUDE);
    expect(parts).toEqual([
      { type: 'reasoning', text: 'The user wants the weather; I will call the tool.', state: { provider: 'anthropic', data: { signature: 'EqCLAUDESIG+/=' } } },
      { type: 'text', text: 'Let me check — un momento. ☀️' },
      expect.objectContaining({ type: 'tool-call', id: 'toolu_01', name: 'mcp__weather__get_weather', arguments: '{"city":"Paris"}' }),
    ]);
  });

  it('the same answer rendered whole resends the same way', () => {
    const answer = client.renderResponse({
      id: 'msg_01', model: 'claude-sonnet-4-5-20250929', usage: { inputTokens: 40, outputTokens: 17 },
      choices: [{ index: 0, finish: 'tool-calls', parts: [
        { type: 'reasoning', text: 'I will call the tool.', state: { provider: 'anthropic', data: { signature: 'EqCLAUDESIG+/=' } } },
        { type: 'tool-call', id: 'toolu_01', name: 'mcp__weather__get_weather', arguments: '{"city":"Paris"}' },
      ] }],
    }, ctx(codexFirst)) as Record<string, any>;
    expect(answer).toMatchObject({ object: 'response', status: 'completed', usage: { input_tokens: 40, output_tokens: 17, total_tokens: 57 } });
    expect(resent(answer.output, CLAUDE)).toEqual([
      { type: 'reasoning', text: 'I will call the tool.', state: { provider: 'anthropic', data: { signature: 'EqCLAUDESIG+/=' } } },
      expect.objectContaining({ type: 'tool-call', id: 'toolu_01', name: 'mcp__weather__get_weather' }),
    ]);
  });

  it('the rendered stream, split anywhere, reads back through the Responses reader as the same text, reasoning, call and usage', () => {
    const { sse } = rendered(TURN, {});
    const bytes = Buffer.from(sse, 'utf8');
    const OPENAI: Target = { provider: 'openai', displayName: 'OpenAI', model: 'gpt-5.4', protocol: 'openai-responses' };
    const readBack = (cuts: number[]): StreamEvent[] => {
      const parser = new SseParser();
      const reader = openaiResponsesProvider.createStreamReader(OPENAI);
      const out: StreamEvent[] = [];
      let at = 0;
      for (const cut of [...cuts.sort((a, b) => a - b), bytes.length]) {
        for (const ev of parser.push(bytes.subarray(at, cut))) out.push(...reader.push(ev));
        at = cut;
      }
      for (const ev of parser.end()) out.push(...reader.push(ev));
      out.push(...reader.end());
      return out;
    };
    const summary = (events: StreamEvent[]) => ({
      text: events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join(''),
      reasoning: events.filter((e) => e.type === 'reasoning').map((e) => (e as { text: string }).text).join(''),
      calls: events.filter((e) => e.type === 'tool-call-start').map((e) => (e as { name: string }).name),
      args: events.filter((e) => e.type === 'tool-call-arguments').map((e) => (e as { delta: string }).delta).join(''),
      finish: events.filter((e) => e.type === 'finish').map((e) => [(e as { reason: string }).reason, (e as { usage?: unknown }).usage]),
      errors: events.filter((e) => e.type === 'error').length,
    });
    const whole = summary(readBack([]));
    expect(whole).toEqual({
      text: 'Let me check — un momento. ☀️', reasoning: 'The user wants the weather; I will call the tool.',
      calls: ['mcp__weather__get_weather'], args: '{"city":"Paris"}',
      finish: [['tool-calls', expect.objectContaining({ inputTokens: 40, outputTokens: 17 })]], errors: 0,
    });
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 40 }), (cuts) => {
      expect(summary(readBack(cuts))).toEqual(whole);
    }), { numRuns: 200 });
  });

  it('a stream the provider broke off ends in response.failed, and the reader sees an error, not a finish', () => {
    const cut = TURN.slice(0, 6);
    const { sse, final } = rendered(cut, {});
    expect(final).toBeUndefined();
    const types = [...sse.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(types.at(-1)).toBe('response.failed');
    expect(types).not.toContain('response.completed');
    const seqs = [...sse.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
    expect(seqs).toEqual(seqs.map((_, i) => i));
  });
});
