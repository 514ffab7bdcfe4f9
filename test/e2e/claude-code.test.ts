// Claude Code itself (from npm, headless `claude -p`, offline) against the gateway's root. On a GPT
// model and a Gemini model served by mock providers: it talks Anthropic Messages to the gateway,
// which translates to each provider's own protocol; the mock asks Claude Code to read a file with
// its Read tool and answers with what the tool returned, so a full tool round trip is proven by
// the printed answer. On a Claude model: the fast path, where each request reaches Anthropic as
// Claude Code sent it (a recording hop in front of the gateway keeps the original), only the
// model and the key changed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_TEXT, type MockHandler, type MockReply, type Recorded } from '../helpers/mock-provider.js';
import { runClaudeCode } from '../helpers/claude-code.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRecordingHop } from '../helpers/recording-hop.js';

const SECRET = `tool-result-${process.pid}`;

let gw: TestGateway;
let work: string;
beforeAll(async () => {
  gw = await startTestGateway();
  work = mkdtempSync(join(tmpdir(), 'gateway-claude-'));
  writeFileSync(join(work, 'note.txt'), `${SECRET}\n`);
});
afterAll(async () => {
  await gw?.close();
  rmSync(work, { recursive: true, force: true });
});

const sse = (events: string[]): MockReply => ({ headers: { 'content-type': 'text/event-stream' }, chunks: events });
const body = (r: Recorded) => JSON.parse(r.body.toString('utf8')) as Record<string, any>;

/** What the tool gave back in the last turn, if the last turn is a tool result. */
type Turn = { kind: 'result'; text: string } | { kind: 'read' } | { kind: 'text' };

/** OpenAI: asks for Read on note.txt when the Read tool is offered, then repeats what it returned. */
const openaiReader: MockHandler = (r) => {
  if (!r.url.startsWith('/v1/chat/completions')) return undefined;
  const b = body(r);
  const last = b.messages.at(-1);
  const turn: Turn = last.role === 'tool' ? { kind: 'result', text: String(last.content) }
    : (b.tools ?? []).some((t: any) => t.function?.name === 'Read') ? { kind: 'read' } : { kind: 'text' };
  const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-cc', object: 'chat.completion.chunk', created: 1, model: b.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const usage = `data: ${JSON.stringify({ id: 'chatcmpl-cc', object: 'chat.completion.chunk', created: 1, model: b.model, choices: [], usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 } })}\n\n`;
  if (turn.kind === 'read') {
    const args = JSON.stringify({ file_path: join(work, 'note.txt') });
    return sse([chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_read1', type: 'function', function: { name: 'Read', arguments: '' } }] }, null), chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }, null), chunk({}, 'tool_calls'), usage, 'data: [DONE]\n\n']);
  }
  const text = turn.kind === 'result' ? `The file says: ${/tool-result-\d+/.exec(turn.text)?.[0] ?? '(nothing)'}` : 'Hello from GPT.';
  return sse([chunk({ role: 'assistant', content: '' }, null), chunk({ content: text }, null), chunk({}, 'stop'), usage, 'data: [DONE]\n\n']);
};

/** Gemini: the same conversation in Gemini's protocol (whole function calls, thought signatures). */
const geminiReader: MockHandler = (r) => {
  const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent)/.exec(r.url);
  if (!m) return undefined;
  const b = body(r);
  const last = b.contents.at(-1);
  const result = last.parts.find((p: any) => p.functionResponse)?.functionResponse;
  const offersRead = (b.tools ?? []).some((t: any) => (t.functionDeclarations ?? []).some((f: any) => f.name === 'Read'));
  const parts = result ? [{ text: `The file says: ${/tool-result-\d+/.exec(JSON.stringify(result.response))?.[0] ?? '(nothing)'}` }]
    : offersRead ? [{ functionCall: { name: 'Read', args: { file_path: join(work, 'note.txt') } }, thoughtSignature: 'c2lnbmF0dXJl' }]
    : [{ text: 'Hello from Gemini.' }];
  const resp = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 5, totalTokenCount: 55 }, modelVersion: m[1], responseId: 'resp-cc' };
  return m[2] === 'generateContent' ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(resp) } : sse([`data: ${JSON.stringify(resp)}\r\n\r\n`]);
};

const runClaude = (model: string, prompt: string, baseUrl = gw.url) =>
  runClaudeCode({ url: baseUrl, key: gw.key, model, prompt, cwd: work, allowedTools: ['Read'], timeoutMs: 90_000 });

describe('Claude Code through the gateway on foreign models', () => {
  it('on a GPT model: reads a file with its Read tool and answers with what it found', async () => {
    gw.mocks.openai.setHandler(openaiReader);
    const r = await runClaude('openai/gpt-5.4', 'What does note.txt say?');
    expect(r.stdout, r.stderr).toContain(`The file says: ${SECRET}`);
    expect(r.code).toBe(0);
    const calls = gw.mocks.openai.requests.map(body).filter((b) => (b.tools ?? []).length > 0);
    // The second call carried the Read tool's result back under the provider's own call id.
    expect(calls.some((b) => b.messages.some((m: any) => m.role === 'tool' && m.tool_call_id === 'call_read1' && String(m.content).includes(SECRET)))).toBe(true);
    expect(gw.mocks.openai.requests.every((q) => !q.body.toString().includes(gw.key))).toBe(true);
  }, 120_000);

  it('on a Gemini model: the same round trip, Gemini\'s thought signature given back', async () => {
    gw.mocks.gemini.setHandler(geminiReader);
    const r = await runClaude('gemini/gemini-3.5-flash', 'What does note.txt say?');
    expect(r.stdout, r.stderr).toContain(`The file says: ${SECRET}`);
    expect(r.code).toBe(0);
    const withResult = gw.mocks.gemini.requests.map(body).find((b) => b.contents.some((c: any) => c.parts.some((p: any) => p.functionResponse)));
    expect(withResult).toBeDefined();
    const modelTurn = withResult!.contents.find((c: any) => c.role === 'model' && c.parts.some((p: any) => p.functionCall));
    expect(modelTurn.parts.find((p: any) => p.functionCall).thoughtSignature).toBe('c2lnbmF0dXJl');
  }, 120_000);
});

/** Headers a hop rewrites by nature (framing, host, compression) or that carry the credential. */
const NOT_FORWARDED_AS_IS = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'accept-encoding', 'authorization', 'x-api-key']);

describe('Claude Code through the gateway on a Claude model (the fast path)', () => {
  it('each request reaches Anthropic byte for byte but the model and the key, and Claude Code prints Anthropic\'s answer', async () => {
    gw.mocks.anthropic.setHandler(undefined); // Anthropic's own answer: MOCK_TEXT, streamed
    const hop = await startRecordingHop(gw.url);
    try {
      const upstreamBefore = gw.mocks.anthropic.requests.length;
      const r = await runClaude('anthropic/claude-opus-5', 'Say hello.', hop.url);
      expect(r.stdout, r.stderr).toContain(MOCK_TEXT);
      expect(r.code).toBe(0);

      const sent = hop.requests.filter((q) => q.method === 'POST' && q.url.startsWith('/v1/messages'));
      const received = gw.mocks.anthropic.requests.slice(upstreamBefore);
      expect(sent.length).toBeGreaterThan(0);
      expect(received).toHaveLength(sent.length);
      for (const client of sent) {
        const raw = client.body.toString('utf8');
        expect(JSON.parse(raw).model).toBe('anthropic/claude-opus-5');
        // The top-level model's value is the one change to the body: the rest is Claude Code's own bytes.
        const expected = raw.replace('"model":"anthropic/claude-opus-5"', '"model":"claude-opus-5"');
        const up = received.find((u) => u.body.toString('utf8') === expected);
        expect(up, `no upstream request carried Claude Code's body for ${client.url} unchanged`).toBeDefined();
        expect(JSON.parse(up!.body.toString('utf8'))).toStrictEqual({ ...JSON.parse(raw), model: 'claude-opus-5' });
        expect(up!.url).toBe(client.url); // ?beta=true kept
        // Every header Claude Code sent arrives as it sent it (anthropic-version, anthropic-beta, its user agent…)…
        for (const [name, value] of Object.entries(client.headers)) {
          if (!NOT_FORWARDED_AS_IS.has(name)) expect(up!.headers[name], name).toEqual(value);
        }
        // …but its credential: the proxy key is replaced by Anthropic's key, in Anthropic's header.
        expect(client.headers.authorization).toBe(`Bearer ${gw.key}`);
        expect(up!.headers['x-api-key']).toBe(gw.mocks.anthropic.key);
        expect(up!.headers.authorization).toBeUndefined();
        expect(JSON.stringify(up!.headers) + up!.url + up!.body.toString('utf8')).not.toContain(gw.key);
      }
    } finally {
      await hop.close();
    }
  }, 120_000);
});
