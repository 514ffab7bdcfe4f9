// Quirk profiles on the Chat wire body (apply-quirks.ts), which both the translated path (through
// buildChatRequest) and the Chat fast path send: each switch changes what a server that needs it
// receives, and OpenAI's own profile changes nothing.
import { describe, expect, it } from 'vitest';
import type { Target } from '../../src/providers/ir/protocol.js';
import type { Request } from '../../src/providers/ir/types.js';
import { readChatError } from '../../src/providers/protocols/openai-chat/provider/read-error.js';
import { applyChatQuirks, toolCallId9 } from '../../src/providers/protocols/openai-chat/provider/apply-quirks.js';
import { buildChatRequest } from '../../src/providers/protocols/openai-chat/provider/build-request.js';
import { validateStoredProvider } from '../../src/providers/configured.js';
import { PRESETS } from '../../src/providers/presets.js';
import { OPENAI_PROFILE, QUIRK_PROFILES, QUIRK_PROFILE_NAMES, quirksOf } from '../../src/providers/quirks.js';
import { TranslationError } from '../../src/providers/types.js';

const q = (name: string) => QUIRK_PROFILES[name]!;
const target = (name: string, model = 'm-1'): Target => ({ provider: name, displayName: name, model, protocol: 'openai-chat', quirks: q(name) });
const ir = (over: Partial<Request> = {}): Request => ({
  model: 'm-1', system: [], messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], tools: [], stopSequences: [], stream: false, ...over,
});
const refused = (fn: () => unknown): TranslationError => {
  try { fn(); } catch (e) { if (e instanceof TranslationError) return e; throw e; }
  throw new Error('expected a TranslationError');
};

describe('profiles', () => {
  it('a descriptor without a profile, or with an unknown one, gets OpenAI behaviour', () => {
    expect(quirksOf({})).toBe(OPENAI_PROFILE);
    expect(quirksOf({ quirks: 'no-such-profile' })).toBe(OPENAI_PROFILE);
    expect(quirksOf({ quirks: 'mistral' }).name).toBe('mistral');
  });
  it('has the profile every preset names', () => {
    const named = PRESETS.flatMap((p) => (p.quirks ? [p.quirks] : []));
    expect(named).toEqual(expect.arrayContaining(['deepseek', 'mistral', 'groq', 'xai', 'ollama', 'openrouter', 'vllm']));
    for (const name of named) expect(QUIRK_PROFILE_NAMES).toContain(name);
  });
  it('a configured provider naming an unknown profile is refused, saying which exist', () => {
    expect(() => validateStoredProvider('mine', { protocol: 'openai-chat', baseUrl: 'http://127.0.0.1:9/v1', quirks: 'mistrall' })).toThrow(/no quirk profile is named "mistrall" \(known: openai, deepseek/);
    expect(validateStoredProvider('mine', { protocol: 'openai-chat', baseUrl: 'http://127.0.0.1:9/v1', quirks: 'mistral' }).quirks).toBe('mistral');
  });
  it("OpenAI's profile leaves a body as it is (the same object)", () => {
    const body = { model: 'gpt-5.4', messages: [{ role: 'system', content: [{ type: 'text', text: 'x' }] }], store: true, n: 2, stream: true, stream_options: { include_usage: true }, max_completion_tokens: 5 };
    expect(applyChatQuirks(body, OPENAI_PROFILE, 'gpt-5.4', 'OpenAI')).toBe(body);
  });
});

describe('stream_options.include_usage', () => {
  it('is asked of servers that take it, and left out for Mistral', () => {
    expect(buildChatRequest(ir({ stream: true }), target('openai')).body.stream_options).toEqual({ include_usage: true });
    const mistral = buildChatRequest(ir({ stream: true }), target('mistral')).body;
    expect(mistral.stream).toBe(true);
    expect(mistral).not.toHaveProperty('stream_options');
  });
  it("is taken out of a client's own body on the fast path", () => {
    expect(applyChatQuirks({ stream: true, stream_options: { include_usage: true } }, q('mistral'), 'mistral-large-latest', 'Mistral')).toEqual({ stream: true });
  });
});

describe('max_tokens vs max_completion_tokens', () => {
  it('sends max_completion_tokens to OpenAI and max_tokens where the server takes only that', () => {
    expect(buildChatRequest(ir({ maxOutputTokens: 100 }), target('openai')).body).toMatchObject({ max_completion_tokens: 100 });
    for (const name of ['deepseek', 'mistral', 'ollama']) {
      const body = buildChatRequest(ir({ maxOutputTokens: 100 }), target(name)).body;
      expect(body.max_tokens).toBe(100);
      expect(body).not.toHaveProperty('max_completion_tokens');
    }
  });
  it("renames a client's max_completion_tokens on the fast path (max_tokens is kept)", () => {
    expect(applyChatQuirks({ max_completion_tokens: 7 }, q('mistral'), 'x', 'Mistral')).toEqual({ max_tokens: 7 });
    expect(applyChatQuirks({ max_tokens: 9 }, q('mistral'), 'x', 'Mistral')).toEqual({ max_tokens: 9 });
  });
});

describe('Groq: rejected fields and system content', () => {
  const groq = q('groq');
  it('drops store and messages[].name', () => {
    const body = { model: 'llama', store: false, messages: [{ role: 'user', content: 'hi', name: 'ann' }] };
    expect(applyChatQuirks(body, groq, 'llama', 'Groq')).toEqual({ model: 'llama', messages: [{ role: 'user', content: 'hi' }] });
    expect(body.store).toBe(false); // the client's body is not modified
  });
  it('refuses what would change the answer, naming the field, and drops harmless values', () => {
    expect(refused(() => applyChatQuirks({ logprobs: true }, groq, 'llama', 'Groq'))).toMatchObject({ param: 'logprobs', message: expect.stringContaining('Groq does not accept logprobs') });
    expect(refused(() => applyChatQuirks({ top_logprobs: 3 }, groq, 'llama', 'Groq')).param).toBe('top_logprobs');
    expect(refused(() => applyChatQuirks({ n: 2 }, groq, 'llama', 'Groq')).param).toBe('n');
    expect(refused(() => applyChatQuirks({ logit_bias: { 50256: -100 } }, groq, 'llama', 'Groq')).param).toBe('logit_bias');
    expect(applyChatQuirks({ logprobs: false, n: 1, logit_bias: {}, top_logprobs: 0, seed: 1 }, groq, 'llama', 'Groq')).toEqual({ seed: 1 });
  });
  it('refuses through the translated path too (a Messages client asking for several candidates)', () => {
    expect(refused(() => buildChatRequest(ir({ candidates: 3 }), target('groq'))).param).toBe('n');
  });
  it('flattens system and developer content parts to a string', () => {
    const body = { messages: [
      { role: 'system', content: [{ type: 'text', text: 'Be terse.' }, { type: 'text', text: 'Use SI units.' }] },
      { role: 'developer', content: [{ type: 'text', text: 'Dev.' }] },
      { role: 'user', content: [{ type: 'text', text: 'keep me a list' }] },
    ] };
    expect(applyChatQuirks(body, groq, 'llama', 'Groq').messages).toEqual([
      { role: 'system', content: 'Be terse.\n\nUse SI units.' },
      { role: 'developer', content: 'Dev.' },
      { role: 'user', content: [{ type: 'text', text: 'keep me a list' }] },
    ]);
  });
});

describe('xAI: penalties and stop on reasoning models', () => {
  const xai = q('xai');
  it('drops penalties and refuses stop for reasoning models', () => {
    expect(applyChatQuirks({ presence_penalty: 0.5, frequency_penalty: 0.2, temperature: 1 }, xai, 'grok-4', 'xAI')).toEqual({ temperature: 1 });
    const e = refused(() => applyChatQuirks({ stop: ['END'] }, xai, 'grok-4-1-fast-reasoning', 'xAI'));
    expect(e.param).toBe('stop');
    expect(e.message).toContain("xAI's grok-4-1-fast-reasoning does not accept stop sequences");
    expect(refused(() => buildChatRequest(ir({ stopSequences: ['END'] }), target('xai', 'grok-3-mini'))).param).toBe('stop');
  });
  it('leaves other models alone', () => {
    const body = { presence_penalty: 0.5, stop: ['END'] };
    expect(applyChatQuirks(body, xai, 'grok-3', 'xAI')).toBe(body);
    expect(applyChatQuirks(body, xai, 'grok-4-fast-non-reasoning', 'xAI')).toBe(body);
  });
});

describe('Mistral: 9-character tool-call ids', () => {
  const mistral = q('mistral');
  const ID9 = /^[a-zA-Z0-9]{9}$/;
  const history = () => ({ messages: [
    { role: 'user', content: 'weather?' },
    { role: 'assistant', content: null, tool_calls: [
      { id: 'call_7Qa_long-id', type: 'function', function: { name: 'w', arguments: '{}' } },
      { id: 'toolu_01ABCDEF', type: 'function', function: { name: 'w', arguments: '{}' } },
      { id: 'AbC123xyZ', type: 'function', function: { name: 'w', arguments: '{}' } },
    ] },
    { role: 'tool', tool_call_id: 'call_7Qa_long-id', content: '18C' },
    { role: 'tool', tool_call_id: 'toolu_01ABCDEF', content: '19C' },
    { role: 'tool', tool_call_id: 'AbC123xyZ', content: '20C' },
  ] });

  it('rewrites ids that do not fit, keeps those that do, and keeps calls paired with their results', () => {
    const body = history();
    const out = applyChatQuirks(body, mistral, 'mistral-large-latest', 'Mistral').messages as any[];
    const ids = out[1].tool_calls.map((c: { id: string }) => c.id);
    for (const id of ids) expect(id).toMatch(ID9);
    expect(ids[2]).toBe('AbC123xyZ');
    expect(new Set(ids).size).toBe(3);
    expect(out.slice(2).map((m) => m.tool_call_id)).toEqual(ids);
    expect(body.messages[1]!.tool_calls![0]!.id).toBe('call_7Qa_long-id'); // the client's copy is untouched
  });
  it('is deterministic: a stateless client resending its history sends the same ids up', () => {
    const a = applyChatQuirks(history(), mistral, 'm', 'Mistral');
    const b = applyChatQuirks(history(), mistral, 'm', 'Mistral');
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(toolCallId9('call_abc')).toBe(toolCallId9('call_abc'));
    expect(toolCallId9('call_abc')).not.toBe(toolCallId9('call_abd'));
  });
  it('applies on the translated path (ids from a Claude conversation)', () => {
    const body = buildChatRequest(ir({ messages: [
      { role: 'user', parts: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', parts: [{ type: 'tool-call', id: 'toolu_01XyZ', name: 'w', arguments: '{}' }] },
      { role: 'user', parts: [{ type: 'tool-result', callId: 'toolu_01XyZ', content: [{ type: 'text', text: 'ok' }] }] },
    ] }), target('mistral')).body as any;
    const id = body.messages[1].tool_calls[0].id;
    expect(id).toMatch(ID9);
    expect(body.messages[2].tool_call_id).toBe(id);
    // OpenAI's profile sends the id unchanged.
    expect((buildChatRequest(ir({ messages: [{ role: 'assistant', parts: [{ type: 'tool-call', id: 'toolu_01XyZ', name: 'w', arguments: '{}' }] }] }), target('openai')).body as any).messages[0].tool_calls[0].id).toBe('toolu_01XyZ');
  });
});

describe('DeepSeek: reasoning_content on tool turns of a client\'s own history', () => {
  it('adds an empty one where the client kept none, and leaves a kept one alone', () => {
    const body = { messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
      { role: 'assistant', content: 'done' },
      { role: 'assistant', content: null, reasoning_content: 'kept', tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'w', arguments: '{}' } }] },
    ] };
    const out = applyChatQuirks(body, q('deepseek'), 'deepseek-chat', 'DeepSeek').messages as any[];
    expect(out[1].reasoning_content).toBe('');
    expect(out[3]).not.toHaveProperty('reasoning_content');
    expect(out[4].reasoning_content).toBe('kept');
    expect(applyChatQuirks(body, OPENAI_PROFILE, 'gpt-5.4', 'OpenAI')).toBe(body);
  });
});

describe("errors from servers without OpenAI's error wrapper", () => {
  const t: Target = { provider: 'mistral', displayName: 'Mistral', model: 'm' };
  it("keep the server's message (Mistral's plain and schema errors)", () => {
    expect(readChatError(400, JSON.stringify({ object: 'error', message: 'Tool call id was call_0 but must be a-z, A-Z, 0-9, with a length of 9.', type: 'invalid_request_error', param: null, code: null }), t).message)
      .toBe('Tool call id was call_0 but must be a-z, A-Z, 0-9, with a length of 9.');
    expect(readChatError(422, JSON.stringify({ object: 'error', message: { detail: [{ type: 'extra_forbidden', loc: ['body', 'store'], msg: 'Extra inputs are not permitted', input: true }] } }), t))
      .toMatchObject({ status: 422, kind: 'invalid_request', message: 'store: Extra inputs are not permitted' });
    expect(readChatError(500, 'oops', t).message).toBe('Mistral answered HTTP 500');
  });
});
