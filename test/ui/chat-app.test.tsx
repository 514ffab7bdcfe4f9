// The interactive chat as the user sees it (ink-testing-library frames), talking for real to a
// daemon on loopback with mock providers: streaming answers, /model, /models, /save, /system,
// errors that leave the session usable, and Ctrl-C stopping an answer and its upstream request.
import { render } from 'ink-testing-library';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChatApp } from '../../src/cli/ui/chat/app.js';
import { createChatClient } from '../../src/cli/ui/chat/client.js';
import { themeFor } from '../../src/cli/ui/common/theme.js';
import { resolveModel } from '../../src/providers/models.js';
import { MOCK_TEXT } from '../helpers/mock-provider.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { slowOpenAI, words } from './slow-streams.js';

const ESC = String.fromCharCode(27);
const plain = (s: string | undefined) => (s ?? '').replace(new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, 'g'), '');

let gw: TestGateway;
let tmp: string;
beforeAll(async () => {
  gw = await startTestGateway();
  tmp = mkdtempSync(join(tmpdir(), 'chat-app-'));
});
afterAll(async () => {
  await gw?.close();
  rmSync(tmp, { recursive: true, force: true });
});
let mounted: Array<{ unmount(): void }> = [];
afterEach(() => { for (const m of mounted) m.unmount(); mounted = []; gw.mocks.openai.setHandler(undefined); });

function mount(model = 'openai/gpt-5.4', opts: { key?: string } = {}) {
  const used: string[] = [];
  const app = render(
    <ChatApp
      client={createChatClient(gw.url, opts.key ?? gw.key)} model={model} theme={themeFor({})} banner="gateway chat (test)"
      checkModel={(name) => { try { resolveModel(name); return undefined; } catch (e) { return (e as Error).message; } }}
      onModelUsed={(m) => used.push(m)}
      saveFile={async (p, content) => { const full = join(tmp, p); await writeFile(full, content); return full; }}
      width={100} height={30}
    />,
  );
  mounted.push(app);
  const frame = () => plain(app.lastFrame());
  const all = () => plain(app.frames.join('\n'));
  async function until(pred: () => boolean, what: string, ms = 5000): Promise<string> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (pred()) return frame();
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`timed out waiting for ${what}; last frame:\n${frame()}`);
  }
  const keys = async (...data: string[]) => { for (const d of data) { app.stdin.write(d); await new Promise((r) => setTimeout(r, 15)); } };
  const say = async (text: string) => keys(text, '\r');
  return { app, frame, all, until, keys, say, used };
}

describe('chat app', () => {
  it('streams an answer as it arrives, then shows its tokens and time in the footer', async () => {
    gw.mocks.openai.setHandler(slowOpenAI({ delayMs: 40, pieces: ['The ', 'answer ', 'is\n', '```js\n', 'x = 42\n', '```\n', 'done.'] }));
    const c = mount();
    await c.until(() => c.frame().includes('message, or /help'), 'the prompt');
    await c.say('What is the answer?');
    await c.until(() => c.frame().includes('› What is the answer?'), 'the question printed');
    // Mid-stream: part of the answer is there, the rest not yet.
    await c.until(() => /The answer/.test(c.frame()) && !c.frame().includes('done.'), 'a partial answer');
    expect(c.frame()).toMatch(/openai\/gpt-5\.4 · ~\d+ chunks/);
    const f = await c.until(() => c.frame().includes('done.') && c.frame().includes('last answer'), 'the whole answer');
    expect(f).toMatch(/The answer is\n╭─ js ─+\n│ x = 42\n╰─+\ndone\./);
    expect(f).toMatch(/openai\/gpt-5\.4\s+last answer 9 in \/ 7 out tokens · \d+(ms|\.\ds)/);
    expect(c.used).toEqual(['openai/gpt-5.4']);
    const sent = JSON.parse(gw.mocks.openai.requests.at(-1)!.body.toString()) as { model: string; stream: boolean; messages: unknown[] };
    expect(sent).toMatchObject({ model: 'gpt-5.4', stream: true, messages: [{ role: 'user', content: 'What is the answer?' }] });
  });

  it('/model switches mid-conversation and keeps the history; /models lists what the gateway offers', async () => {
    const c = mount();
    await c.say('hello');
    await c.until(() => c.frame().includes(MOCK_TEXT), 'first answer');
    await c.say('/models');
    await c.until(() => c.frame().includes('3 models'), 'model list');
    expect(c.frame()).toMatch(/anthropic\/claude-opus-5\s+• openai\/gpt-5\.4\s+gemini\/gemini-3\.5-flash/);
    await c.say('/model anthropic/claude-opus-5');
    await c.until(() => c.frame().includes('model: anthropic/claude-opus-5 (the conversation so far goes with it)'), 'switched');
    const before = gw.mocks.anthropic.requests.length;
    await c.say('and you?');
    await c.until(() => gw.mocks.anthropic.requests.length > before && c.frame().split(MOCK_TEXT).length === 3 && !c.frame().includes('ctrl-c stops'), 'answer from anthropic');
    const sent = JSON.parse(gw.mocks.anthropic.requests.at(-1)!.body.toString()) as { model: string; messages: Array<{ role: string }> };
    expect(sent.model).toBe('claude-opus-5');
    expect(sent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    await c.say('/model not-a-model');
    await c.until(() => c.frame().includes('✗ model "not-a-model" does not name a provider'), 'refused model');
    expect(c.frame()).toMatch(/anthropic\/claude-opus-5\s+last answer/);
  });

  it('errors from the daemon are one line and the session goes on', async () => {
    // A wait longer than the gateway's retry-after cap (30 s) reaches the client at once.
    gw.mocks.openai.setHandler((r) => (r.url.startsWith('/v1/chat/completions')
      ? { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '70' }, body: JSON.stringify({ error: { message: 'Rate limit reached for gpt-5.4', type: 'requests', param: null, code: 'rate_limit_exceeded' } }) }
      : undefined));
    const c = mount();
    await c.say('hi');
    await c.until(() => c.frame().includes('✗ Rate limit reached for gpt-5.4 (rate_limit_exceeded, HTTP 429; retry after 70 s)'), '429 line');
    gw.mocks.openai.setHandler(undefined);
    await c.say('/model gemini/gemini-3.5-flash');
    const noKey = mount('openai/gpt-5.4', { key: 'sk-proxy-not-a-real-key-000000000000000000000' });
    await noKey.say('hi');
    await noKey.until(() => noKey.frame().includes('✗ Incorrect API key provided: sk-proxy-…0000. This is an unknown proxy key.'), '401 line');
    await c.keys('\u001B[A', '\u001B[A');
    await c.until(() => c.frame().includes('› hi'), 'history recalls the failed message');
    await c.keys('\r');
    await c.until(() => c.frame().includes(MOCK_TEXT), 'the retry answers (from gemini)');
  });

  it('ctrl-c stops the answer and aborts the provider request; the app keeps running', async () => {
    gw.mocks.openai.setHandler(slowOpenAI({ delayMs: 100, pieces: words(50) }));
    const c = mount();
    const before = gw.mocks.openai.requests.length;
    await c.say('long story please');
    await c.until(() => c.frame().includes('word3'), 'streaming');
    await c.keys('\u0003');
    await c.until(() => c.frame().includes('(stopped)'), 'stopped');
    const req = gw.mocks.openai.requests[before]!;
    await c.until(() => req.aborted, 'upstream aborted', 3000);
    expect(c.frame()).not.toContain('word50');
    expect(c.frame()).toContain('message, or /help');
    await c.keys('\u0003');
    await c.until(() => c.frame().includes('press ctrl-c again to exit'), 'exit hint');
  });

  it('/system, /save and /help', async () => {
    const c = mount();
    await c.say('/system You are terse.');
    await c.until(() => c.frame().includes('system prompt set'), 'system set');
    await c.say('hi');
    await c.until(() => c.frame().includes(MOCK_TEXT), 'answer');
    const sent = JSON.parse(gw.mocks.openai.requests.at(-1)!.body.toString()) as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
    await c.say('/save chat.json');
    await c.until(() => c.frame().includes(`saved 2 messages to ${join(tmp, 'chat.json')}`), 'saved');
    const saved = JSON.parse(readFileSync(join(tmp, 'chat.json'), 'utf8')) as { messages: Array<{ role: string; content: string }> };
    expect(saved.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    expect(saved.messages[2]!.content).toBe(MOCK_TEXT);
    await c.say('/help');
    await c.until(() => c.frame().includes('/save <file>') && c.frame().includes('shift-enter, alt-enter, ctrl-j'), 'help');
  });

  it('multi-line input with alt-enter, ctrl-j and a trailing backslash', async () => {
    const c = mount();
    await c.keys('one', '\u001B\r', 'two', '\n', 'three\\', '\r', 'four');
    await c.until(() => /› one\n\s+two\n\s+three\n\s+four/.test(c.frame()), 'four lines in the input');
    await c.keys('\r');
    await c.until(() => c.frame().includes(MOCK_TEXT), 'answer');
    const sent = JSON.parse(gw.mocks.openai.requests.at(-1)!.body.toString()) as { messages: Array<{ content: string }> };
    expect(sent.messages.at(-1)!.content).toBe('one\ntwo\nthree\nfour');
  });
});
