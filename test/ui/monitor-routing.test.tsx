// The monitor shows what routing did, from the events of a real daemon: Anthropic's mock answers
// 529 (retry-after: 1) so a Messages request is retried, falls back to GPT, where the pool's first
// key is rate-limited and the second serves; then an OpenAI request is retried once after a 503.
// The rows carry the marks (↻ retries, ⇄ key moves, → the fallback that served) at 100 columns,
// and the details view lists each attempt, why it ended and the time waited.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { render } from 'ink-testing-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { MonitorApp, type EventSource } from '../../src/cli/ui/monitor/app.js';
import { themeFor } from '../../src/cli/ui/common/theme.js';
import { initialState, reducer } from '../../src/cli/ui/monitor/state.js';
import { layoutFor, rowLine } from '../../src/cli/ui/monitor/columns.js';
import { DEFAULT_ROUTING } from '../../src/daemon/routing/settings.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply, type Recorded } from '../helpers/mock-provider.js';

const ESC = String.fromCharCode(27);
const plain = (s: string | undefined) => (s ?? '').replace(new RegExp(`${ESC}\\[[0-9;]*m`, 'g'), '');
const KEY_A = 'sk-pool-a-0123456789';
const KEY_B = 'sk-pool-b-0123456789';
const keyOf = (r: Recorded): string => String(r.headers.authorization).replace(/^Bearer /, '');
const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({ status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

let gw: TestGateway;
const events: GatewayEvent[] = [];
const routes: string[] = [];

beforeAll(async () => {
  gw = await startTestGateway({
    providerKeys: { openai: [KEY_A, KEY_B], anthropic: 'real-anthropic-key-0123456789' },
    settings: { routing: { ...DEFAULT_ROUTING, retries: 1, backoff: { baseMs: 10, maxMs: 20 }, routes: { 'claude-sonnet-4-5': ['claude-sonnet-4-5', 'openai/gpt-5.4'] } } },
  });
  gw.daemon.ctx.bus.subscribe((e) => { events.push(e); });
  gw.mocks.anthropic.setHandler(() => json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { 'retry-after': '1' }));
  let failOnce = false;
  gw.mocks.openai.setHandler((r, provider) => {
    if (keyOf(r) === KEY_A) return json(429, { error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, { 'retry-after': '60' });
    if (failOnce) { failOnce = false; return json(503, { error: { message: 'The server is overloaded', type: 'server_error', param: null, code: null } }); }
    return defaultReply(provider, r);
  });
  const claude = await new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 })
    .messages.create({ model: 'claude-sonnet-4-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  routes.push(claude.response.headers.get('x-gateway-route') ?? '');
  failOnce = true;
  const gpt = await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 })
    .chat.completions.create({ model: 'openai/gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  routes.push(gpt.response.headers.get('x-gateway-route') ?? '');
}, 30_000);
afterAll(async () => { await gw?.close(); });

function mount(width: number) {
  let handlers: Parameters<EventSource>[0] | undefined;
  const source: EventSource = (h) => { handlers = h; return () => { handlers = undefined; }; };
  const app = render(<MonitorApp source={source} theme={themeFor({ NO_COLOR: '1' })} tickMs={5} now={() => events.at(-1)!.time} width={width} height={40} />);
  const frame = () => plain(app.lastFrame());
  async function until(pred: (f: string) => boolean, what: string): Promise<string> {
    await expect.poll(() => pred(frame()), { timeout: 3000, message: `waiting for ${what}; last frame:\n${frame()}` }).toBe(true);
    return frame();
  }
  const press = async (data: string) => { app.stdin.write(data); await new Promise((r) => setTimeout(r, 20)); };
  const start = async () => {
    await expect.poll(() => handlers !== undefined).toBe(true);
    handlers!.onStatus({ state: 'connected', url: gw.url, pid: process.pid, startedAt: '' });
    for (const e of events) handlers!.onEvent(e);
  };
  return { app, frame, until, press, start };
}

describe('the monitor shows retries, key moves and fallbacks', () => {
  it('the daemon routed as the scenario says (what the frames below must show)', () => {
    expect(routes).toEqual([
      'anthropic/claude-sonnet-4-5=529, anthropic/claude-sonnet-4-5=529, openai/gpt-5.4#env1=429, openai/gpt-5.4#env2=200',
      'openai/gpt-5.4#env2=503, openai/gpt-5.4#env2=200',
    ]);
  });

  it('at 100 columns each row carries its marks, and the served target survives a narrow model column', async () => {
    const m = mount(100);
    await m.start();
    const f = await m.until((x) => x.includes('gpt-5.4 ↻1'), 'the rows');
    const lines = f.split('\n');
    const claude = lines.find((l) => l.includes('msg '))!;
    // claude-sonnet-4-5 is cut to fit; the marks and the fallback are whole.
    expect(claude).toMatch(/ msg  claude-sonnet… ↻1 ⇄1 → gpt-5\.4\s+200 /);
    expect(lines.find((l) => l.includes('uni '))).toMatch(/ uni  openai\/gpt-5\.4 ↻1\s+200 /);
    expect(lines.every((l) => l.length <= 99)).toBe(true);
    m.app.unmount();
  });

  it('wider, the name asked for is whole (each model named without its provider, which its name says)', () => {
    const s = reducer(initialState(events[0]!.time), { type: 'events', events, now: events.at(-1)!.time });
    const claude = s.done.find((r) => r.mode === 'messages')!;
    expect(rowLine(layoutFor(140), claude, s.now)).toContain(' msg  claude-sonnet-4-5 ↻1 ⇄1 → gpt-5.4 ');
  });

  it('the details list each attempt, why it ended, the time waited and the key that served', async () => {
    const m = mount(100);
    await m.start();
    await m.until((x) => x.includes('gpt-5.4 ↻1'), 'the rows');
    await m.press(`${ESC}[A`);
    await m.press(`${ESC}[A`);
    await m.press('\r');
    const d = await m.until((x) => x.includes('attempts'), 'the details');
    expect(d).toContain('→ served by openai/gpt-5.4');
    expect(d).toContain('· provider key env2');
    // The 529's retry-after: 1 was honoured: the record's wait, as the details print it.
    expect(d).toMatch(/attempts {2}4 · waited 1\.\ds between them/);
    expect(d).toMatch(/1\. anthropic\/claude-sonnet-4-5 +529 overloaded/);
    expect(d).toMatch(/2\. anthropic\/claude-sonnet-4-5 +529 overloaded/);
    expect(d).toMatch(/3\. openai\/gpt-5\.4#env1 +429 rate limited/);
    expect(d).toMatch(/4\. openai\/gpt-5\.4#env2 +200 served/);
    m.app.unmount();
  });

  it('a filter finds a request by its route: 529 matches the request that met one on the way, though it ended 200', async () => {
    const m = mount(100);
    await m.start();
    await m.until((x) => x.includes('gpt-5.4 ↻1'), 'the rows');
    await m.press('f');
    await m.press('529');
    await m.press('\r');
    const f = await m.until((x) => x.includes('filter "529"'), 'the filter note');
    const after = f.slice(f.indexOf('filter "529"'));
    expect(after).toContain('⇄1 → gpt-5.4');
    expect(after).not.toMatch(/uni  openai\/gpt-5\.4 ↻1/);
    m.app.unmount();
  });
});
