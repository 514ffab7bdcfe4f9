// The monitor's reducer, filter language and columns, driven by scripted daemon events.
import { describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { createRecordJoiner } from '../../src/cli/ui/monitor/json.js';
import { layoutFor, headerLine, rowLine, tokensPerSecond } from '../../src/cli/ui/monitor/columns.js';
import { detailLines } from '../../src/cli/ui/monitor/details.js';
import { statusParts } from '../../src/cli/ui/monitor/components.js';
import { matches, parseFilter } from '../../src/cli/ui/monitor/filter.js';
import { commandFor, footerText } from '../../src/cli/ui/monitor/keys.js';
import { splitKeystrokes } from '../../src/cli/ui/common/keystrokes.js';
import { initialState, reducer, requestRate, selectedRow, type Action, type MonitorState } from '../../src/cli/ui/monitor/state.js';
import { failed, finished, firstByte, lifeOf, progress, started, T0 } from './monitor-events.js';

const run = (actions: Action[], s = initialState(T0)): MonitorState => actions.reduce(reducer, s);
const events = (evs: GatewayEvent[], at = 2000): Action => ({ type: 'events', events: evs, now: T0 + at });
const connected: Action = { type: 'connection', status: { state: 'connected', url: 'http://127.0.0.1:8080', pid: 42, startedAt: '' }, now: T0 };
const printedRows = (s: MonitorState) => s.printed.items.flatMap((i) => (i.kind === 'row' ? [i.row] : []));
const key = (over: Partial<Record<string, boolean>> = {}) => ({
  upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false, return: false,
  escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false, super: false, hyper: false, capsLock: false, numLock: false, ...over,
});

describe('monitor reducer', () => {
  it('follows a stream from start to finish: live, then printed once with its usage', () => {
    const [s0, fb, pr, fin] = lifeOf('a');
    let s = run([connected, events([s0!])]);
    expect(s.live.map((r) => r.id)).toEqual(['a']);
    expect(s.totals.requests).toBe(1);
    s = run([events([fb!, pr!], 700)], s);
    expect(s.live[0]).toMatchObject({ ttfbMs: 120, liveTokens: 20, chunks: 5, state: 'live' });
    expect(printedRows(s)).toHaveLength(0);
    s = run([events([fin!], 1200)], s);
    expect(s.live).toHaveLength(0);
    expect(printedRows(s)).toHaveLength(1);
    expect(printedRows(s)[0]).toMatchObject({ id: 'a', state: 'ok', status: 200, durationMs: 1120, usage: { inputTokens: 12, outputTokens: 40 } });
    expect(s.totals).toEqual({ requests: 1, errors: 0, tokensIn: 12, tokensOut: 40, cacheRead: 0, cacheWrite: 0 });
  });

  it('totals the cache reads and writes, and shows them with the hit ratio where the terminal has room', () => {
    const usage = { inputTokens: 1540, cachedTokens: 1200, cacheWriteTokens: 300, cacheWrite1hTokens: 200, outputTokens: 30 };
    const plain = run([connected, events(lifeOf('a'))]);
    expect(statusParts(plain, 150).join(' · ')).not.toContain('cache');
    const s = run([events([started('b', {}, 1500), finished('b', 1900, { usage })])], plain);
    expect(s.totals).toEqual({ requests: 2, errors: 0, tokensIn: 1552, tokensOut: 70, cacheRead: 1200, cacheWrite: 300 });
    expect(statusParts(s, 150)).toEqual([
      'requests 2', 'errors 0', 'in flight 0', 'tokens 1.6k in / 70 out', 'cache 1.2k read / 300 write, 77.3% hit', expect.stringMatching(/req\/s \(1 min\)$/), 'since 10:00:00',
    ]);
    expect(statusParts(s, 120).slice(4)).toEqual(['cache 1.2k read / 300 write, 77.3% hit', expect.stringMatching(/^\d\.\d\d req\/s$/)]);
    expect(statusParts(s, 99).slice(4)).toEqual(['cache 77.3% hit', expect.stringMatching(/^\d\.\d\d req\/s$/)]);
  });

  it('counts errors and keeps their code and message', () => {
    const s = run([events([started('x'), failed('x', 300, 429, 'rate_limit_exceeded', 'Rate limit reached')])]);
    expect(s.totals.errors).toBe(1);
    expect(printedRows(s)[0]).toMatchObject({ state: 'error', status: 429, error: { code: 'rate_limit_exceeded', message: 'Rate limit reached' } });
  });

  it('shows a request that started before the monitor attached, from its end event alone', () => {
    const s = run([events([progress('old', 10, 3), finished('old', 900, { model: 'claude-opus-5' })])]);
    expect(printedRows(s)[0]).toMatchObject({ id: 'old', model: 'claude-opus-5', provider: null, state: 'ok' });
    expect(s.totals.requests).toBe(1);
  });

  it('marks requests in flight as lost when the daemon goes away, and says so', () => {
    let s = run([connected, events([started('a'), started('b')])]);
    s = run([{ type: 'connection', status: { state: 'no-daemon', retryInMs: 250 }, now: T0 + 3000 }], s);
    expect(s.live).toHaveLength(0);
    expect(printedRows(s).map((r) => r.state)).toEqual(['lost', 'lost']);
    expect(s.printed.items.some((i) => i.kind === 'note' && /stopped/.test(i.text))).toBe(true);
  });

  it('computes requests per second over the last minute', () => {
    const evs = Array.from({ length: 30 }, (_, i) => started(`r${i}`, {}, i * 1000));
    const s = run([events(evs, 30_000)]);
    expect(requestRate(s)).toBeCloseTo(1, 1);
    const later = run([{ type: 'tick', now: T0 + 120_000 }], s);
    expect(requestRate(later)).toBe(0);
  });

  it('pause holds events and applies them on resume; the display does not move meanwhile', () => {
    let s = run([events([started('a')], 100), { type: 'pause', now: T0 + 100 }]);
    s = run([events([finished('a', 500), ...lifeOf('b', 600)], 2000), { type: 'tick', now: T0 + 5000 }], s);
    expect(s.live.map((r) => r.id)).toEqual(['a']);
    expect(s.paused?.held).toHaveLength(5);
    expect(printedRows(s)).toHaveLength(0);
    s = run([{ type: 'pause', now: T0 + 6000 }], s);
    expect(s.paused).toBeNull();
    expect(printedRows(s).map((r) => r.id)).toEqual(['a', 'b']);
  });

  it('filters printed and live rows, reprints recent matches when the filter changes', () => {
    let s = run([events([
      ...lifeOf('o1'), started('a1', { provider: 'anthropic', model: 'claude-opus-5', keyName: 'chat' }),
      failed('a1', 800, 500, 'upstream_error', 'boom'), started('g1', { provider: 'gemini', model: 'gemini-3.5-flash' }),
    ])]);
    s = run([{ type: 'filter_start' }, { type: 'filter_edit', apply: () => 'key:chat' }, { type: 'filter_apply' }], s);
    expect(s.filter.text).toBe('key:chat');
    const last = s.printed.items.slice(-2);
    expect(last[0]).toEqual({ kind: 'columns' });
    expect(last[1]).toMatchObject({ kind: 'row', row: { id: 'a1' } });
    s = run([events([...lifeOf('o2', 2000)], 4000)], s);
    expect(printedRows(s).filter((r) => r.id === 'o2')).toHaveLength(0);
  });

  it('moves a selection over finished and live rows and opens details', () => {
    let s = run([events([...lifeOf('a'), ...lifeOf('b', 10), started('c', {}, 20)])]);
    s = run([{ type: 'select' }], s);
    expect(s.view).toBe('select');
    expect(selectedRow(s)?.id).toBe('c');
    s = run([{ type: 'move', by: -1 }, { type: 'move', by: -1 }, { type: 'move', by: -1 }], s);
    expect(selectedRow(s)?.id).toBe('a');
    s = run([{ type: 'details' }], s);
    expect(s.view).toBe('details');
    s = run([{ type: 'back' }, { type: 'back' }], s);
    expect(s.view).toBe('table');
    expect(s.selectedId).toBeNull();
  });

  it('clear empties rows and totals but keeps requests in flight, and starts a new static generation', () => {
    let s = run([events([...lifeOf('a'), started('b')])]);
    s = run([{ type: 'clear', now: T0 + 3000 }], s);
    expect(s.done).toHaveLength(0);
    expect(s.live.map((r) => r.id)).toEqual(['b']);
    expect(s.totals).toEqual({ requests: 1, errors: 0, tokensIn: 0, tokensOut: 0, cacheRead: 0, cacheWrite: 0 });
    expect(s.printed).toEqual({ gen: 1, items: [] });
    expect(s.clearScreen).toBe(1);
    s = run([{ type: 'screen_cleared' }], s);
    expect(s.printed.items).toEqual([{ kind: 'columns' }]);
  });

  it('starts a new <Static> generation when the printed list grows long, keeping what is not printed yet', () => {
    const many = Array.from({ length: 2100 }, (_, i) => [started(`r${i}`), finished(`r${i}`, 100)]).flat();
    let s = run([events(many)]);
    const printed = s.printed.items.length;
    s = run([events(lifeOf('late', 5000), 6000)], s);
    s = run([{ type: 'static_rollover', printedUpTo: printed }], s);
    expect(s.printed.gen).toBe(1);
    expect(s.printed.items).toHaveLength(1);
    expect(s.done).toHaveLength(1000);
  });
});

describe('filter language', () => {
  const s = run([events([
    ...lifeOf('ok1'), started('e1', { provider: 'anthropic', model: 'claude-opus-5', keyName: 'chat', mode: 'native' }), failed('e1', 300, 429, 'rate_limit', 'slow down'),
  ])]);
  const rows = s.done;
  const ids = (f: string) => rows.filter((r) => matches(r, parseFilter(f))).map((r) => r.id);

  it.each([
    ['', ['ok1', 'e1']], ['openai', ['ok1']], ['p:anthropic', ['e1']], ['key:chat', ['e1']], ['status:4xx', ['e1']], ['429', ['e1']],
    ['s:ok', ['ok1']], ['err', ['e1']], ['-key:chat', ['ok1']], ['model:gpt mode:unified', ['ok1']], ['mode:native s:5xx', []], ['OPENAI', ['ok1']],
  ])('%j → %j', (f, want) => { expect(ids(f)).toEqual(want); });
});

describe('columns', () => {
  const s = run([events([...lifeOf('a'), started('live', { model: null, mode: 'native' }, 100), firstByte('live', 200), progress('live', 1200, 30)], 1300)]);
  const done = s.done[0]!;
  const live = s.live[0]!;

  it('fits 80 columns, keeping every column readable', () => {
    const layout = layoutFor(80);
    for (const line of [headerLine(layout), rowLine(layout, done, T0 + 2000), rowLine(layout, live, T0 + 2000)]) expect(line.length).toBeLessThanOrEqual(79);
    expect(headerLine(layout)).toMatch(/TIME\s+KEY\s+MODE\s+PROVIDER\/MODEL\s+ST\s+TTFB\s+DUR\s+TOK IN\/OUT\s+TOK\/S/);
    expect(rowLine(layout, done, 0)).toMatch(/env\s+uni\s+openai\/gpt-5\.4\s+200\s+120ms\s+1\.1s\s+12\/40\s+40/);
  });

  it('adds the request number and the path on wide terminals', () => {
    expect(headerLine(layoutFor(100))).toMatch(/^\s+# TIME/);
    expect(headerLine(layoutFor(160))).toContain('PATH');
  });

  it('shows a live stream with a spinner, its elapsed time, its token counter and rate', () => {
    const line = rowLine(layoutFor(100), live, T0 + 1300, 3);
    expect(line).toMatch(/openai \/v1\/chat\/completions\s+⠸\s+200ms\s+1\.2s\s+–\/30\s+27/);
    expect(tokensPerSecond(live, T0 + 1300)).toBeCloseTo(27.3, 0);
  });

  it('details list timings, usage and headers as sent (already masked)', () => {
    const text = detailLines(done, T0 + 2000, 100, 40).map((l) => l.text).join('\n');
    expect(text).toMatch(/route\s+unified · openai · gpt-5.4 · streaming/);
    expect(text).toMatch(/first byte 120ms · total 1\.1s/);
    expect(text).toMatch(/usage\s+input 12 · output 40/);
    expect(text).toContain('authorization: Bearer …wxyz');
    expect(detailLines(done, T0, 100, 6)).toHaveLength(6);
  });
});

describe('keys through the reducer', () => {
  it('applies keys that arrive in one chunk one after the other (f, text, ctrl-u, text, enter)', () => {
    const keys = splitKeystrokes('fopenai\x15gemini\r', key());
    expect(keys).toHaveLength(15);
    const s = run(keys.map((k) => ({ type: 'key' as const, input: k.input, key: k.key, now: T0 })));
    expect(s.view).toBe('table');
    expect(s.filter.text).toBe('gemini');
  });

  it('q asks the app to quit; p pauses', () => {
    expect(run([{ type: 'key', input: 'q', key: key(), now: T0 }]).quit).toBe(true);
    expect(run([{ type: 'key', input: 'p', key: key(), now: T0 }]).paused).not.toBeNull();
  });
});

describe('shortcuts table', () => {
  it('maps keys per view, and the footer names them', () => {
    expect(commandFor('table', '', key({ upArrow: true }), 0)).toEqual({ type: 'move', by: -1 });
    expect(commandFor('table', 'q', key(), 0)).toEqual({ type: 'quit' });
    expect(commandFor('table', 'p', key(), 5)).toEqual({ type: 'pause', now: 5 });
    expect(commandFor('help', '', key({ upArrow: true }), 0)).toBeUndefined();
    expect(commandFor('filter', 'q', key(), 0)).toBeUndefined();
    expect(footerText('table', false)).toBe('↑↓ select  f filter  p pause  c clear  ? help  q quit');
    expect(footerText('table', true)).toContain('p resume');
    expect(footerText('details', false)).toContain('enter details');
  });
});

describe('--json records', () => {
  it('joins start and end into one line per request, and only then', () => {
    const join = createRecordJoiner();
    const out = [...lifeOf('a'), started('b'), failed('b', 50, 401, 'invalid_api_key', 'no')].map(join).filter(Boolean);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({ id: 'a', key: 'env', provider: 'openai', model: 'gpt-5.4', status: 200, ok: true, ttfbMs: 120, durationMs: 1120, usage: { inputTokens: 12, outputTokens: 40 } });
    expect(out[1]).toMatchObject({ id: 'b', ok: false, status: 401, error: { code: 'invalid_api_key', message: 'no' } });
    expect(JSON.stringify(out)).not.toContain('authorization');
  });
});
