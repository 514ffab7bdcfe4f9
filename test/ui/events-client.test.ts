// The monitor's events client against a real daemon (mock providers on loopback): what arrives for
// requests made with the official openai SDK, credentials masked, reconnecting after a restart, and
// what it reports when no daemon runs or the token is wrong.
import OpenAI from 'openai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonInfo } from '../../src/cli/daemon-client.js';
import { subscribeEvents, type ConnectionStatus } from '../../src/cli/events-client.js';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { startDaemon, type RunningDaemon } from '../../src/daemon/server.js';
import { staticSecrets } from '../../src/daemon/store/secrets.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { slowOpenAI } from './slow-streams.js';

let gw: TestGateway;
let current: RunningDaemon | undefined;
const locate = (): DaemonInfo | undefined => (current ? { pid: process.pid, host: '127.0.0.1', port: current.port, url: current.url, startedAt: '' } : undefined);
const useDaemon = (d: RunningDaemon | undefined) => { current = d; if (d) writeFileSync(join(gw.dir, 'admin-token'), d.adminToken); };

beforeAll(async () => {
  gw = await startTestGateway();
  useDaemon(gw.daemon);
});
afterAll(async () => { await gw?.close(); });

async function until<T>(get: () => T | undefined, what: string, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function collect() {
  const events: GatewayEvent[] = [];
  const statuses: ConnectionStatus[] = [];
  const sub = subscribeEvents({ dir: gw.dir, locate, minBackoffMs: 20, maxBackoffMs: 100, onEvent: (e) => events.push(e), onStatus: (s) => statuses.push(s) });
  return { events, statuses, sub, last: () => statuses[statuses.length - 1] };
}

describe('events client', () => {
  it('delivers the life of an SDK stream (unified and native), with request headers whose credentials are masked', async () => {
    const c = collect();
    await until(() => c.last()?.state === 'connected', 'connected');
    gw.mocks.openai.setHandler(slowOpenAI({ delayMs: 60, pieces: ['one ', 'two ', 'three ', 'four ', 'five '] }));
    try {
      const unified = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
      const native = new OpenAI({ baseURL: `${gw.url}/openai/v1`, apiKey: gw.key, maxRetries: 0 });
      for (const client of [unified, native]) {
        const stream = await client.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
        let text = '';
        for await (const ch of stream) text += ch.choices[0]?.delta.content ?? '';
        expect(text).toBe('one two three four five ');
      }
    } finally { gw.mocks.openai.setHandler(undefined); }
    await until(() => c.events.filter((e) => e.type === 'finished').length >= 2 || undefined, 'two finished events');
    const started = c.events.filter((e): e is Extract<GatewayEvent, { type: 'started' }> => e.type === 'started');
    expect(started.map((e) => [e.mode, e.provider, e.keyName])).toEqual([['unified', 'openai', 'test'], ['native', 'openai', 'test']]);
    expect(started[0]!.stream).toBe(true);
    // A native request's body is not read, so its first byte says that it streams.
    expect(c.events.find((e) => e.type === 'first_byte' && e.id === started[1]!.id)).toMatchObject({ stream: true });
    for (const s of started) {
      expect(s.headers?.authorization).toBe(`Bearer …${gw.key.slice(-4)}`);
      expect(s.headers?.['user-agent']).toMatch(/^OpenAI\/JS/);
    }
    expect(JSON.stringify(c.events)).not.toContain(gw.key);
    expect(JSON.stringify(c.events)).not.toContain(gw.mocks.openai.key);
    const id = started[0]!.id;
    const life = c.events.filter((e) => e.id === id).map((e) => e.type);
    expect(life[0]).toBe('started');
    expect(life[1]).toBe('first_byte');
    expect(life).toContain('progress');
    expect(life[life.length - 1]).toBe('finished');
    const progress = c.events.find((e): e is Extract<GatewayEvent, { type: 'progress' }> => e.type === 'progress' && e.id === id)!;
    expect(progress.outputTokens).toBeGreaterThan(0);
    const fin = c.events.find((e) => e.type === 'finished' && e.id === id) as Extract<GatewayEvent, { type: 'finished' }>;
    expect(fin).toMatchObject({ status: 200, usage: { inputTokens: 9, outputTokens: 5 } });
    c.sub.close();
    await c.sub.done;
  });

  it('reconnects when the daemon restarts (with a new admin token), and says when none runs', async () => {
    const c = collect();
    await until(() => c.last()?.state === 'connected', 'connected');
    const first = gw.daemon;
    useDaemon(undefined);
    // Stand in for `gateway stop` then `gateway start`: a second daemon on the same state dir.
    const second = await startDaemon({
      port: 0, stateDir: gw.dir, secrets: staticSecrets({ openai: gw.mocks.openai.key }), origins: { openai: gw.mocks.openai.origin },
    });
    await first.close(200);
    await until(() => c.statuses.some((s) => s.state === 'disconnected') || undefined, 'disconnected');
    await until(() => c.last()?.state === 'no-daemon' || undefined, 'no daemon');
    useDaemon(second);
    await until(() => (c.last()?.state === 'connected' && (c.last() as { url: string }).url === second.url) || undefined, 'reconnected');
    const client = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    await client.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'again' }] });
    await until(() => c.events.some((e) => e.type === 'finished') || undefined, 'an event from the new daemon');
    c.sub.close();
    await c.sub.done;
    gw.daemon = second;
    useDaemon(second);
  });

  it('reports a refused admin token and keeps retrying', async () => {
    writeFileSync(join(gw.dir, 'admin-token'), 'not-the-token');
    const c = collect();
    const s = await until(() => c.statuses.find((x): x is Extract<ConnectionStatus, { state: 'disconnected' }> => x.state === 'disconnected'), 'refused');
    expect(s.reason).toBe('the daemon refused the admin token');
    writeFileSync(join(gw.dir, 'admin-token'), current!.adminToken);
    await until(() => c.last()?.state === 'connected' || undefined, 'connected with the right token');
    c.sub.close();
    await c.sub.done;
  });
});
