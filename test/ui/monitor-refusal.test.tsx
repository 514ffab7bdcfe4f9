// A request the gateway refuses before routing (bad key, model not allowed) is shown in the monitor
// with what is known — its door and why it was refused — never as "(started before the monitor)".
// The events come from a real daemon refusing real requests; the frames from the real monitor app.
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
  const { key: limited } = gw.keys.create({ name: 'only-haiku', models: ['claude-haiku-*'] });
  await gw.daemon.reload();
  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then((r) => r.text());
  const chat = { model: 'anthropic/claude-opus-5', messages: [{ role: 'user', content: 'hi' }] };
  await post('/v1/chat/completions', { authorization: 'Bearer sk-proxy-not-a-key-we-issued' }, chat);
  await post('/anthropic/v1/messages', { 'x-api-key': 'sk-proxy-not-a-key-we-issued' }, { model: 'claude-opus-5', max_tokens: 5, messages: chat.messages });
  await post('/v1/chat/completions', { authorization: `Bearer ${limited}` }, chat);
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
  return { app, frame, until, press, emit: (evs: GatewayEvent[]) => { for (const e of evs) handlers!.onEvent(e); }, connect: () => handlers!.onStatus({ state: 'connected', url: 'http://127.0.0.1:8080', pid: 1, startedAt: '' }) };
}

describe('requests refused before routing', () => {
  it('the daemon marks them refused', () => {
    const failed = events.filter((e) => e.type === 'failed');
    expect(failed.map((e) => [e.type === 'failed' && e.code, e.type === 'failed' && e.refused])).toEqual([
      ['invalid_api_key', true], ['invalid_api_key', true], ['model_not_allowed', true],
    ]);
  });

  it('show their door and why they were refused, and the details say so', async () => {
    const m = mount();
    try {
      m.connect();
      m.emit(events);
      const f = await m.until((x) => x.includes('requests 3'), 'three rows');
      expect(f).not.toContain('started before the monitor');
      // The reason first, then the door (as much as the column holds); the key column is cut to its width.
      expect(f).toMatch(/\(no valid k…\s+uni\s+refused: unknown key · unified\s+401/);
      expect(f).toMatch(/\(no valid k…\s+nat\s+refused: unknown key · anthropic\s+401/);
      expect(f).toMatch(/only-haiku\s+uni\s+refused: model not allowed · anthropic\/clau…\s+403/);
      expect(f).toContain('↳ invalid_api_key: unknown proxy key (see: gateway keys list)');
      await m.press('\u001B[A');
      await m.press('\u001B[A');
      await m.press('\u001B[A');
      await m.press('\r');
      const d = await m.until((x) => x.includes('request #1'), 'details');
      expect(d).toMatch(/status\s+401 refused: unknown key/);
      expect(d).toMatch(/route\s+unified · – · –\n/);
    } finally {
      m.app.unmount();
    }
  });

  it('gateway monitor --json marks them refused too', () => {
    const join = createRecordJoiner();
    const records = events.map(join).filter((r) => r !== undefined);
    expect(records.map((r) => [r.mode, r.path, r.status, r.refused])).toEqual([
      ['unified', '/v1/chat/completions', 401, true], ['native', '/anthropic/v1/messages', 401, true], ['unified', '/v1/chat/completions', 403, true],
    ]);
  });
});
