// The monitor as the user sees it: ink-testing-library frames for a scripted event sequence
// (start → first byte → progress → finish), errors, filtering, pause, details, narrow terminals and NO_COLOR.
import chalk from 'chalk';
import { render } from 'ink-testing-library';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import type { ConnectionStatus } from '../../src/cli/events-client.js';
import type { StoreStatusView } from '../../src/daemon/store/store-health.js';
import { MonitorApp, type EventSource } from '../../src/cli/ui/monitor/app.js';
import { themeFor } from '../../src/cli/ui/common/theme.js';
import { gatewayCmd } from '../../src/cli/invocation.js';
import { failed, finished, firstByte, lifeOf, progress, started, T0 } from './monitor-events.js';

const ESC = String.fromCharCode(27);
const ANSI = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');
const COLOR = new RegExp(`${ESC}\\[(3[0-7]|9[0-7]|38;)`);
const plain = (s: string | undefined) => (s ?? '').replace(ANSI, '');

/** A scripted daemon: the test pushes events and connection changes. */
function scripted() {
  let handlers: Parameters<EventSource>[0] | undefined;
  const source: EventSource = (h) => { handlers = h; return () => { handlers = undefined; }; };
  return {
    source,
    emit: (...evs: GatewayEvent[]) => { for (const e of evs) handlers!.onEvent(e); },
    status: (s: ConnectionStatus) => handlers!.onStatus(s),
    store: (s: StoreStatusView) => handlers!.onStore(s),
    connect: () => handlers!.onStatus({ state: 'connected', url: 'http://127.0.0.1:8080', pid: 4242, startedAt: '' }),
    /** Whether the monitor still listens to the daemon (it lets go when it exits). */
    subscribed: () => handlers !== undefined,
  };
}

let clock = T0;
const now = () => clock;
let instances: Array<{ unmount(): void }> = [];
afterEach(() => { for (const i of instances) i.unmount(); instances = []; });

function mount(opts: { width?: number; height?: number; noColor?: boolean } = {}) {
  const d = scripted();
  const app = render(<MonitorApp source={d.source} theme={themeFor(opts.noColor ? { NO_COLOR: '1' } : {})} tickMs={5} now={now} width={opts.width ?? 100} height={opts.height ?? 30} />);
  instances.push(app);
  const frame = () => plain(app.lastFrame());
  async function until(pred: (frame: string) => boolean, what: string, ms = 2000): Promise<string> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (pred(frame())) return frame();
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`timed out waiting for ${what}; last frame:\n${frame()}`);
  }
  const press = async (data: string) => { app.stdin.write(data); await new Promise((r) => setTimeout(r, 20)); };
  return { ...d, app, frame, until, press };
}

beforeAll(() => { chalk.level = 1; });

describe('monitor frames', () => {
  it('team mode: while the daemon\'s shared store is unreachable the header says degraded since when, and the scrollback notes when it went and came back', async () => {
    const m = mount({ width: 180 });
    m.connect();
    const store: StoreStatusView = { display: 'gw@db.example:5432/gateway', daemonId: 'box:8080', connected: true, downSince: null, lastError: null, daemons: 2, unreconciled: 0 };
    m.store(store);
    await m.until((f) => f.includes('waiting for requests'), 'connected');
    expect(m.frame()).not.toContain('degraded');
    clock = T0 + 1000;
    m.store({ ...store, connected: false, downSince: '2026-11-27T09:30:12.345Z', lastError: 'the store at gw@db.example:5432/gateway: connection refused (is PostgreSQL running there?)' });
    const down = await m.until((f) => f.includes('▲ degraded'), 'the degraded header');
    expect(down).toContain("▲ degraded: store unreachable since 2026-11-27T09:30:12Z · limits on this daemon's share");
    expect(down).toMatch(/── 10:00:01 store gw@db\.example:5432\/gateway: degraded: store unreachable since 2026-11-27T09:30:12/);
    m.store({ ...store });
    const back = await m.until((f) => !f.includes('▲ degraded'), 'the header without it');
    expect(back).toContain('store gw@db.example:5432/gateway connected again');
  });

  it('start → first byte → progress → finish: a live row with spinner and token counter, then a printed row and totals', async () => {
    const m = mount();
    await m.until((f) => f.includes('connecting to the gateway'), 'connecting');
    m.connect();
    await m.until((f) => f.includes('● gateway 127.0.0.1:8080 (pid 4242)') && f.includes('waiting for requests'), 'connected');
    const [s, fb, pr, fin] = lifeOf('req1');
    clock = T0 + 50;
    m.emit(s!);
    const live = await m.until((f) => /openai\/gpt-5\.4\s+[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\s+…/.test(f), 'live row with a spinner');
    expect(live).toContain('in flight 1');
    clock = T0 + 700;
    m.emit(fb!, pr!);
    await m.until((f) => /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\s+120ms\s+700ms\s+–\/20\s+34/.test(f), 'live token counter and rate');
    clock = T0 + 1200;
    m.emit(fin!);
    const done = await m.until((f) => /env\s+uni\s+openai\/gpt-5\.4\s+200\s+120ms\s+1\.1s\s+12\/40\s+40/.test(f), 'finished row');
    expect(done).toMatch(/requests 1 · errors 0 · in flight 0 · tokens 12 in \/ 40 out/);
    expect(done).toContain('no request in flight');
    expect(done).toContain('↑↓ select  f filter  p pause  c clear  ? help  q quit');
  });

  it('shows errors in red with their message', async () => {
    const m = mount();
    m.connect();
    m.emit(started('e1', { provider: 'anthropic', model: 'claude-opus-5' }), failed('e1', 300, 429, 'rate_limit_error', 'Number of requests has exceeded your rate limit'));
    await m.until((f) => f.includes('↳ rate_limit_error: Number of requests has exceeded your rate limit'), 'error line');
    const raw = m.app.lastFrame()!;
    const redLines = raw.split('\n').filter((l) => l.includes(`${ESC}[31m`));
    expect(redLines.some((l) => /anthropic\/claude-opus-5.*429/.test(plain(l)))).toBe(true);
    expect(redLines.some((l) => plain(l).includes('↳ rate_limit_error'))).toBe(true);
    expect(plain(raw)).toMatch(/errors 1/);
  });

  it('NO_COLOR: no colour codes at all, and errors still readable', async () => {
    const m = mount({ noColor: true });
    m.connect();
    m.emit(...lifeOf('a'), started('e1'), failed('e1', 300, 502, 'upstream_unreachable', 'cannot reach openai'));
    await m.until((f) => f.includes('↳ upstream_unreachable: cannot reach openai'), 'error line');
    for (const f of m.app.frames) expect(f).not.toMatch(COLOR);
  });

  it('stays within 80 columns on a narrow terminal', async () => {
    const m = mount({ width: 80, height: 24 });
    m.connect();
    m.emit(...lifeOf('a'), started('long', { model: 'claude-opus-5-20261122-with-a-very-long-snapshot-name', provider: 'anthropic', keyName: 'a-long-key-name' }));
    m.emit(started('e', { keyName: 'chat' }), failed('e', 10, 400, 'invalid_request', 'x'.repeat(300)));
    await m.until((f) => f.includes('↳ invalid_request') && f.includes('in flight 1'), 'rows');
    for (const line of m.frame().split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(m.frame()).toMatch(/ claude-opus-5-20261…/);
    expect(m.frame()).toMatch(/TIME\s+KEY\s+MODE\s+PROVIDER\/MODEL\s+ST\s+TTFB\s+DUR\s+TOK IN\/OUT\s+TOK\/S/);
  });

  it('f filters: new rows that do not match are not printed, and the filter is shown', async () => {
    const m = mount();
    m.connect();
    m.emit(...lifeOf('first'));
    await m.until((f) => /openai\/gpt-5\.4\s+200/.test(f), 'first row');
    await m.press('f');
    await m.until((f) => f.includes('filter: '), 'filter prompt');
    await m.press('provider:gemini');
    await m.press('\r');
    await m.until((f) => f.includes('filter "provider:gemini": the last 0 matching requests') && f.includes('filter: provider:gemini'), 'filter applied');
    m.emit(...lifeOf('o2', 100), ...['g1'].flatMap((id) => [started(id, { provider: 'gemini', model: 'gemini-3.5-flash' }), finished(id, 300, { model: 'gemini-3.5-flash' })]));
    const f = await m.until((x) => x.includes('gemini/gemini-3.5-flash') && x.includes('requests 3'), 'gemini row');
    const afterFilter = f.slice(f.indexOf('filter "provider:gemini"'));
    expect(afterFilter).not.toMatch(/openai\/gpt-5\.4\s+200/);
  });

  it('p pauses the display (events are held) and resumes it', async () => {
    const m = mount();
    m.connect();
    await m.press('p');
    await m.until((f) => f.includes('PAUSED'), 'paused');
    m.emit(...lifeOf('held'));
    await m.until((f) => f.includes('PAUSED (4 events held)'), 'held count');
    expect(m.frame()).not.toMatch(/openai\/gpt-5\.4\s+200/);
    expect(m.frame()).toContain('p resume');
    await m.press('p');
    await m.until((f) => /openai\/gpt-5\.4\s+200/.test(f) && !f.includes('PAUSED'), 'resumed');
  });

  it('↑ and enter show the details of a request, with masked headers', async () => {
    const m = mount({ height: 40 });
    m.connect();
    m.emit(...lifeOf('one'), started('two', { keyName: 'chat', headers: { authorization: 'Bearer …abcd', 'x-stainless-lang': 'js' } }));
    await m.until((f) => f.includes('in flight 1'), 'rows');
    await m.press('\u001B[A');
    await m.until((f) => f.includes('2 of 2'), 'selection list');
    await m.press('\u001B[A');
    await m.until((f) => f.includes('1 of 2'), 'moved up');
    await m.press('\r');
    const d = await m.until((f) => f.includes('request #1'), 'details');
    expect(d).toMatch(/headers\s+\(credentials masked\)/);
    expect(d).toContain('authorization: Bearer …wxyz');
    expect(d).toMatch(/usage\s+input 12 · output 40/);
    await m.press('\u001B[B');
    await m.until((f) => f.includes('request #2') && f.includes('authorization: Bearer …abcd'), 'details follow the selection');
    await m.press('\u001B');
    await m.until((f) => f.includes('2 of 2'), 'back to the list');
  });

  it('shows the prompt cache where it shows tokens: the hit ratio in the totals, reads and writes in a request\'s details', async () => {
    const usage = { inputTokens: 1540, cachedTokens: 1200, cacheWriteTokens: 300, cacheWrite1hTokens: 200, outputTokens: 30, reasoningTokens: 10 };
    const m = mount({ height: 40 });
    m.connect();
    m.emit(...lifeOf('plain'));
    const before = await m.until((f) => f.includes('requests 1 · errors 0'), 'a request without cache use');
    expect(before).not.toContain('cache');
    m.emit(started('cached', {}, 2000), finished('cached', 3000, { durationMs: 1000, usage }));
    // 1,200 of the 1,552 input tokens were cache reads; 100 columns leave room for the ratio alone.
    const after = await m.until((f) => f.includes('requests 2'), 'the cached request');
    expect(after).toMatch(/tokens 1\.6k in \/ 70 out · cache 77\.3% hit · \d\.\d\d req\/s\n/);
    await m.press('\u001B[A');
    await m.until((f) => f.includes('2 of 2'), 'selection list');
    await m.press('\r');
    const d = await m.until((f) => f.includes('request #2'), 'details');
    expect(d).toMatch(/usage\s+input 1\.5k · output 30 · reasoning 10\n/);
    expect(d).toMatch(/cache\s+1\.2k read · 300 written \(200 for 1h\) · 77\.9% of the input read\n/);
  });

  it('says plainly when no gateway runs, and when it comes back', async () => {
    const m = mount();
    m.status({ state: 'no-daemon', retryInMs: 250 });
    // The hint names the command as this process was launched (npx gateway under npm test).
    await m.until((f) => f.includes(`no gateway is running; start one with: ${gatewayCmd('start')}`), 'no daemon');
    m.connect();
    await m.until((f) => f.includes('connected to the gateway at http://127.0.0.1:8080 (pid 4242)'), 'connected note');
    m.emit(started('x'));
    await m.until((f) => f.includes('in flight 1'), 'in flight');
    m.status({ state: 'disconnected', url: 'http://127.0.0.1:8080', reason: 'connection refused', retryInMs: 500 });
    const f = await m.until((x) => x.includes('unreachable (connection refused); retrying'), 'disconnected');
    expect(f).toMatch(/openai\/gpt-5\.4\s+\?/);
    expect(f).toContain('lost the gateway at http://127.0.0.1:8080: connection refused; reconnecting');
  });

  it('c clears rows and totals; q quits', async () => {
    const m = mount();
    m.connect();
    m.emit(...lifeOf('a'));
    await m.until((f) => f.includes('requests 1'), 'one request');
    await m.press('c');
    await m.until((f) => f.includes('requests 0'), 'cleared totals');
    expect(m.app.stdout.frames.some((f) => f.includes(`${ESC}[2J`))).toBe(true);
    await m.press('?');
    await m.until((f) => f.includes('Keys') && f.includes('pause / resume'), 'help');
    expect(m.subscribed()).toBe(true);
    await m.press('q');
    await m.until(() => !m.subscribed(), 'the monitor to exit and let go of the event stream');
  });
});
