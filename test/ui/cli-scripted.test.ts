// The scriptable faces of `gateway monitor` and `gateway chat`, run as the built CLI against a real
// background daemon and mock providers: JSON lines when piped, one-shot answers, stdin, errors.
import OpenAI from 'openai';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, GATEWAY_BIN, makeTempHome, runCli } from '../helpers/cli.js';
import { MOCK_TEXT } from '../helpers/mock-provider.js';
import { startRealGateway, type RealGateway } from './real-gateway.js';
import { slowOpenAI } from './slow-streams.js';

let gw: RealGateway;
beforeAll(async () => { gw = await startRealGateway(); }, 30_000);
afterAll(async () => { await gw?.stop(); });

const chat = (args: string[], input?: string) => gw.cli(['chat', ...args], { input });

function oneLineError(r: { code: number | null; stderr: string; stdout: string }, pattern: RegExp): void {
  expect(r.code).toBe(1);
  const lines = r.stderr.trimEnd().split('\n').filter((l) => l.startsWith('error: '));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

describe('gateway monitor, piped', () => {
  it('says clearly that no gateway runs', async () => {
    const empty = makeTempHome();
    try {
      const r = await runCli(['monitor', '--json'], { home: empty.dir });
      oneLineError(r, /^error: the gateway is not running \(start it with: gateway start\)$/);
      expect(r.stdout).toBe('');
    } finally { empty.cleanup(); }
  });

  it('prints one JSON line per finished request, live, and stops cleanly on SIGINT', async () => {
    // No --json: stdout is a pipe here, which is enough.
    const child = spawn(process.execPath, [GATEWAY_BIN, 'monitor'], { env: { ...baseEnv(), ...gw.env, GATEWAY_HOME: gw.home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/openai/v1`, apiKey: gw.sdkKey, maxRetries: 0 });
      gw.mocks.openai.setHandler(slowOpenAI({ delayMs: 10, pieces: ['a ', 'b ', 'c '] }));
      // The monitor attaches in its own time: send requests until one is reported whole (one that
      // started before it attached is reported too, with only what its end event tells).
      const deadline = Date.now() + 10_000;
      while (!out.includes('"mode":"native"') && Date.now() < deadline) {
        const s = await client.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }], stream: true });
        for await (const _ of s) { /* drain */ }
        await new Promise((r) => setTimeout(r, 100));
      }
      const unified = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.sdkKey, maxRetries: 0 });
      await unified.chat.completions.create({ model: 'gemini/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }] });
      await expect.poll(() => out.split('\n').filter((l) => l.includes('"gemini"')).length, { timeout: 5000 }).toBe(1);
      const lines = out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      // The monitor may attach mid-request: such a line has only what the end event tells.
      expect(lines.find((l) => l.mode === 'native')).toMatchObject({ key: 'sdk', mode: 'native', provider: 'openai', model: 'gpt-5.4', method: 'POST', path: '/v1/chat/completions', stream: true, status: 200, ok: true, usage: { inputTokens: 9, outputTokens: 3 } });
      expect(lines.at(-1)).toMatchObject({ mode: 'unified', provider: 'gemini', model: 'gemini-3.5-flash', stream: false, status: 200, ok: true });
      expect(lines.every((l) => typeof l.durationMs === 'number' && typeof l.status === 'number')).toBe(true);
      expect(out).not.toContain(gw.sdkKey);
    } finally {
      gw.mocks.openai.setHandler(undefined);
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});

describe('gateway chat, scripted', () => {
  it('answers a message given as argument, with a short-lived key of its own that ends with it', async () => {
    const r = await chat(['-m', 'openai/gpt-5.4', 'Say hi']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${MOCK_TEXT}\n`);
    const again = await chat(['Say hi again']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`${MOCK_TEXT}\n`);
    // Without --model, the model of the last chat is used again.
    const sent = JSON.parse(gw.mocks.openai.requests.at(-1)!.body.toString()) as { model: string; messages: unknown[] };
    expect(sent).toMatchObject({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'Say hi again' }] });
    // Each chat had its own key (the access log names them), and none is left.
    // (The daemon writes its log in batches: wait for the lines.)
    const used = async () => new Set((await gw.cli(['logs'])).stdout.match(/key=chat\.[0-9a-f]{8} -> 200/g)).size;
    await expect.poll(used, { timeout: 5_000 }).toBe(2);
    const keys = JSON.parse((await gw.cli(['keys', 'list', '--json'])).stdout) as Array<{ name: string; status: string }>;
    expect(keys.filter((k) => k.name.startsWith('chat') && k.status === 'active')).toEqual([]);
  });

  it('reads piped stdin, after the argument, and takes --system', async () => {
    const before = gw.mocks.gemini.requests.length;
    const r = await chat(['-m', 'gemini/gemini-3.5-flash', '-s', 'Be brief.', 'Summarize this:'], 'line one\nline two\n');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${MOCK_TEXT}\n`);
    expect(gw.mocks.gemini.requests.length).toBe(before + 1);
    const body = gw.mocks.gemini.requests.at(-1)!.body.toString();
    expect(body).toContain('Summarize this:\\n\\nline one\\nline two');
    expect(body).toContain('Be brief.');
    const piped = await chat(['-m', 'anthropic/claude-opus-5'], 'only stdin');
    expect(piped.stdout).toBe(`${MOCK_TEXT}\n`);
  });

  it('daemon errors are one readable line with a non-zero exit', async () => {
    // A wait longer than the gateway's retry-after cap (30 s) reaches the client at once.
    gw.mocks.openai.setHandler((r) => (r.url.startsWith('/v1/chat/completions')
      ? { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '90' }, body: JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }) }
      : undefined));
    try {
      oneLineError(await chat(['-m', 'openai/gpt-5.4', 'hi']), /^error: Rate limit reached \(rate_limit_exceeded, HTTP 429; retry after 90 s\)$/);
    } finally { gw.mocks.openai.setHandler(undefined); }
    oneLineError(await chat(['-m', 'mystery-model', 'hi']), /^error: model "mystery-model" does not name a provider/);
  });

  it('still accepts --insecure-storage from earlier versions, and says it is not needed', async () => {
    const r = await chat(['--insecure-storage', '-m', 'openai/gpt-5.4', 'hi']);
    expect(r.stderr).toBe('note: --insecure-storage is no longer needed: chat stores no key\n');
    expect(r.stdout).toBe(`${MOCK_TEXT}\n`);
  });

  it('says clearly that no gateway runs', async () => {
    const empty = makeTempHome();
    try {
      oneLineError(await runCli(['chat', 'hi'], { home: empty.dir }), /^error: the gateway is not running \(start it with: gateway start\)$/);
    } finally { empty.cleanup(); }
  });

  it('refuses an empty message (stdin piped but empty)', async () => {
    oneLineError(await chat(['-m', 'openai/gpt-5.4'], ''), /^error: nothing to send: the message and stdin are empty$/);
  });
});
