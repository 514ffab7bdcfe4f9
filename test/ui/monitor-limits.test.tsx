// A request its key's own limit refused is shown in the monitor with that limit (`limit:rpm`, 429),
// in its details, and in `gateway monitor --json`. The events come from a real daemon refusing real
// requests on a door and on a native prefix; the frames from the real monitor app.
import { render } from 'ink-testing-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { MonitorApp, type EventSource } from '../../src/cli/ui/monitor/app.js';
import { createRecordJoiner } from '../../src/cli/ui/monitor/json.js';
import { themeFor } from '../../src/cli/ui/common/theme.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

let gw: TestGateway;
const events: GatewayEvent[] = [];
beforeAll(async () => {
  gw = await startTestGateway();
  gw.daemon.ctx.bus.subscribe((e) => events.push(e));
  const { key } = gw.keys.create({ name: 'one-a-minute', limits: { rpm: 1 } });
  const { key: tiny } = gw.keys.create({ name: 'tiny-budget', limits: { budget: { usd: 0.00001, period: 'total' } } });
  await gw.daemon.reload();
  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then((r) => r.status);
  const chat = { model: 'openai/gpt-4o', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] };
  expect(await post('/v1/chat/completions', { authorization: `Bearer ${key}` }, chat)).toBe(200);
  expect(await post('/v1/chat/completions', { authorization: `Bearer ${key}` }, chat)).toBe(429);
  expect(await post('/anthropic/v1/messages', { 'x-api-key': tiny }, { model: 'claude-sonnet-4-5', max_tokens: 20, messages: chat.messages })).toBe(429);
  await new Promise((r) => setImmediate(r));
});
afterAll(async () => { await gw?.close(); });

function mount() {
  let handlers: Parameters<EventSource>[0] | undefined;
  const source: EventSource = (h) => { handlers = h; return () => { handlers = undefined; }; };
  const app = render(<MonitorApp source={source} theme={themeFor({ NO_COLOR: '1' })} tickMs={5} now={() => Date.now()} width={120} height={40} />);
  const frame = () => (app.lastFrame() ?? '').replace(ANSI, '');
  async function until(pred: (f: string) => boolean, what: string): Promise<string> {
    const end = Date.now() + 3000;
    while (Date.now() < end) {
      if (pred(frame())) return frame();
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`timed out waiting for ${what}; last frame:\n${frame()}`);
  }
  const press = async (data: string) => { app.stdin.write(data); await new Promise((r) => setTimeout(r, 20)); };
  return { app, until, press, emit: (evs: GatewayEvent[]) => { for (const e of evs) handlers!.onEvent(e); }, connect: () => handlers!.onStatus({ state: 'connected', url: 'http://127.0.0.1:8080', pid: 1, startedAt: '' }) };
}

describe('requests refused by their key\'s limit', () => {
  it('the daemon names the limit in their failed event', () => {
    const failed = events.filter((e) => e.type === 'failed');
    expect(failed.map((e) => e.type === 'failed' && [e.status, e.code, e.limit])).toEqual([[429, 'rate_limited', 'rpm'], [429, 'budget_exceeded', 'budget']]);
  });

  it('show the limit where the model goes, beside the 429, and in the details', async () => {
    const m = mount();
    try {
      m.connect();
      m.emit(events);
      const f = await m.until((x) => x.includes('requests 3'), 'three rows');
      expect(f).toMatch(/one-a-minute\s+uni\s+limit:rpm · gpt-4o\s+429/);
      expect(f).toMatch(/tiny-budget\s+nat\s+limit:budget · claude-sonnet-4-5\s+429/);
      expect(f).toMatch(/one-a-minute\s+uni\s+openai\/gpt-4o\s+200/); // the one admitted reads as before
      await m.press('\u001B[A');
      await m.press('\u001B[A');
      await m.press('\r');
      const d = await m.until((x) => x.includes('request #2'), 'details');
      expect(d).toMatch(/status\s+429 refused by the key's rpm limit/);
    } finally {
      m.app.unmount();
    }
  });

  it('gateway monitor --json gives their limit', () => {
    const join = createRecordJoiner();
    const records = events.map(join).filter((r) => r !== undefined);
    expect(records.map((r) => [r.key, r.status, r.limit])).toEqual([['one-a-minute', 200, undefined], ['one-a-minute', 429, 'rpm'], ['tiny-budget', 429, 'budget']]);
  });
});
