// `gateway monitor` in a real terminal (tmux) over a real background daemon with mock providers:
// an openai SDK stream appears live with its progress, keys work, it rides out a daemon restart,
// says when no daemon runs, keeps up with 200 concurrent streams, and `start --foreground` shows it.
import OpenAI from 'openai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribeEvents } from '../../src/cli/events-client.js';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { GATEWAY_BIN, makeTempHome, runCli } from '../helpers/cli.js';
import { startRealGateway, type RealGateway } from '../ui/real-gateway.js';
import { slowOpenAI, words } from '../ui/slow-streams.js';
import { hasTmux, Tmux } from './tmux.js';

const SPIN = '[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]';
const tmux = new Tmux();
let gw: RealGateway;
const monitorEnv = () => ({ GATEWAY_HOME: gw.home, ...gw.env });

beforeAll(async () => { if (hasTmux) gw = await startRealGateway(); }, 30_000);
afterAll(async () => {
  tmux.kill();
  await gw?.stop();
});

/** A fresh monitor in its own tmux session, connected: every test opens its own. */
async function openMonitor(session: string): Promise<void> {
  tmux.start(session, [process.execPath, GATEWAY_BIN, 'monitor'], monitorEnv());
  const port = new URL(gw.url).port;
  await tmux.waitFor(session, (s) => s.includes(`● gateway 127.0.0.1:${port}`) && s.includes('waiting for requests'), 'connected monitor');
}

async function drain(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<string> {
  let text = '';
  for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
  return text;
}

describe.skipIf(!hasTmux)('gateway monitor in tmux', () => {
  it('shows an openai SDK stream live, with its spinner and a token counter that grows, then the finished row', async () => {
    await openMonitor('mon');
    gw.mocks.openai.setHandler(slowOpenAI({ delayMs: 120, pieces: words(24) }));
    const client = new OpenAI({ baseURL: `${gw.url}/openai/v1`, apiKey: gw.sdkKey, maxRetries: 0 });
    const done = client.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'count' }], stream: true }).then(drain);
    const liveRow = new RegExp(`sdk\\s+nat\\s+openai /v1/chat/completions\\s+${SPIN}\\s+\\d+ms\\s+[\\d.]+m?s\\s+(?:↓[\\d.]+k?B|–/(\\d+))`);
    const first = await tmux.waitFor('mon', (s) => liveRow.test(s), 'a live row with a spinner');
    expect(first).toContain('in flight 1');
    // Progress is live: the output counter moves while the stream runs.
    const counter = (s: string) => /(↓[\d.]+k?B|–\/\d+)\s+\S+\s*$/m.exec(s.split('\n').find((l) => liveRow.test(l)) ?? '')?.[1];
    const seen = new Set<string>();
    await tmux.waitFor('mon', (s) => { const c = counter(s); if (c) seen.add(c); return seen.size >= 3; }, 'the counter to change at least twice');
    expect(await done).toBe(words(24).join(''));
    gw.mocks.openai.setHandler(undefined);
    const after = await tmux.waitFor('mon', (s) => /sdk\s+nat\s+openai\/gpt-5\.4\s+200\s+\d+ms\s+[\d.]+s\s+9\/24\s+\d+/.test(s), 'the finished row with usage');
    expect(after).toMatch(/requests 1 · errors 0 · in flight 0 · tokens 9 in \/ 24 out/);
    tmux.end('mon');
  });

  it('↑ selects, enter shows details with masked headers, f filters, p pauses', async () => {
    await openMonitor('mon');
    const native = new OpenAI({ baseURL: `${gw.url}/openai/v1`, apiKey: gw.sdkKey, maxRetries: 0 });
    await drain(await native.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'count' }], stream: true }));
    await tmux.waitFor('mon', (s) => /sdk\s+nat\s+openai\/gpt-5\.4\s+200/.test(s) && s.includes('requests 1'), 'the first request');
    tmux.keys('mon', 'Up');
    await tmux.waitFor('mon', (s) => s.includes('1 of 1'), 'the selection list');
    tmux.keys('mon', 'Enter');
    const details = await tmux.waitFor('mon', (s) => s.includes('request #1'), 'details');
    expect(details).toMatch(/route\s+native · openai · gpt-5\.4 · streaming/);
    expect(details).toContain(`authorization: Bearer …${gw.sdkKey.slice(-4)}`);
    expect(details).not.toContain(gw.sdkKey);
    expect(details).toMatch(/user-agent: OpenAI\/JS/);
    tmux.keys('mon', 'Escape');
    await tmux.waitFor('mon', (s) => s.includes('1 of 1') && !s.includes('request #1'), 'back to the list');
    tmux.keys('mon', 'Escape');
    await tmux.waitFor('mon', (s) => !s.includes('1 of 1'), 'back to the table');

    tmux.keys('mon', 'p');
    await tmux.waitFor('mon', (s) => s.includes('PAUSED'), 'paused');
    const unified = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.sdkKey, maxRetries: 0 });
    await unified.chat.completions.create({ model: 'anthropic/claude-opus-5', messages: [{ role: 'user', content: 'hi' }] });
    await tmux.waitFor('mon', (s) => /PAUSED \(\d+ events held\)/.test(s), 'events held while paused');
    expect(tmux.screen('mon')).not.toMatch(/anthropic\/claude-opus-5\s+200/);
    tmux.keys('mon', 'p');
    await tmux.waitFor('mon', (s) => /sdk\s+uni\s+anthropic\/claude-opus-5\s+200/.test(s) && s.includes('requests 2'), 'shown on resume');

    tmux.keys('mon', 'f');
    await tmux.waitFor('mon', (s) => s.includes('type a filter'), 'filter prompt');
    tmux.type('mon', 'p:gemini');
    tmux.keys('mon', 'Enter');
    await tmux.waitFor('mon', (s) => s.includes('filter "p:gemini": the last 0 matching requests') && s.includes('filter: p:gemini'), 'filter applied');
    await unified.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hidden' }] });
    await unified.chat.completions.create({ model: 'gemini/gemini-3.5-flash', messages: [{ role: 'user', content: 'shown' }] });
    const filtered = await tmux.waitFor('mon', (s) => /gemini\/gemini-3\.5-flash\s+200/.test(s) && s.includes('requests 4'), 'the gemini row');
    expect(filtered.slice(filtered.indexOf('filter "p:gemini"'))).not.toMatch(/openai\/gpt-5\.4\s+200/);
    tmux.keys('mon', 'f', 'C-u', 'Enter');
    await tmux.waitFor('mon', (s) => s.includes('filter off'), 'filter off');
    tmux.end('mon');
  });

  it('stays responsive with 200 concurrent streams, and every one of them completes', async () => {
    await openMonitor('mon');
    const events: GatewayEvent[] = [];
    const sub = subscribeEvents({ dir: gw.home, onEvent: (e) => events.push(e), onStatus: () => {} });
    gw.mocks.openai.setHandler(slowOpenAI({ delayMs: 25, pieces: words(20) }));
    const client = new OpenAI({ baseURL: `${gw.url}/openai/v1`, apiKey: gw.sdkKey, maxRetries: 0, timeout: 60_000 });
    const before = Number(/requests (\d+)/.exec(tmux.screen('mon'))![1]);
    try {
      const all = Promise.all(Array.from({ length: 200 }, (_, i) => client.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: `n${i}` }], stream: true }).then(drain)));
      await tmux.waitFor('mon', (s) => { const m = /in flight (\d+)/.exec(s); return Boolean(m && Number(m[1]) >= 50); }, 'many streams in flight', 15_000);
      // Responsive under load: key presses still take effect while the streams run.
      tmux.keys('mon', 'p');
      await tmux.waitFor('mon', (s) => s.includes('PAUSED'), 'pause under load');
      tmux.keys('mon', 'p');
      await tmux.waitFor('mon', (s) => !s.includes('PAUSED'), 'resume under load');
      const texts = await all;
      expect(texts.every((t) => t === words(20).join(''))).toBe(true);
      const screen = await tmux.waitFor('mon', (s) => s.includes(`requests ${before + 200} · errors 0 · in flight 0`), 'all 200 counted, none in flight', 15_000);
      expect(screen).toMatch(/\d+(\.\d+)? req\/s/);
      await expect.poll(() => events.filter((e) => e.type === 'finished').length, { timeout: 5000 }).toBe(200);
      expect(events.filter((e) => e.type === 'failed')).toHaveLength(0);
    } finally {
      gw.mocks.openai.setHandler(undefined);
      sub.close();
      await sub.done;
      tmux.end('mon');
    }
  }, 60_000);

  it('rides out a daemon restart and says so; q quits', async () => {
    await openMonitor('mon');
    await gw.restart();
    const port = new URL(gw.url).port;
    const s = await tmux.waitFor('mon', (x) => x.includes(`connected to the gateway at http://127.0.0.1:${port}`) && x.includes(`● gateway 127.0.0.1:${port}`), 'reconnected to the new daemon', 15_000);
    expect(s).toMatch(/the gateway stopped; waiting for it to start again|lost the gateway at/);
    const unified = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.sdkKey, maxRetries: 0 });
    await unified.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'after restart' }] });
    await tmux.waitFor('mon', (x) => /requests \d+ · errors 0 · in flight 0/.test(x) && /uni\s+openai\/gpt-5\.4\s+200/.test(x.slice(x.lastIndexOf('connected to the gateway'))), 'a request after the restart');
    tmux.keys('mon', 'q');
    await tmux.waitFor('mon', (x) => x.includes('[exited 0]'), 'exit 0');
  });

  it('says clearly when no gateway runs, then connects when one is started separately', async () => {
    const home = makeTempHome();
    try {
      const env = { ...gw.env, GATEWAY_HOME: home.dir };
      tmux.start('wait', [process.execPath, GATEWAY_BIN, 'monitor'], env, { width: 80, height: 24 });
      await tmux.waitFor('wait', (s) => s.includes('no gateway is running; start one with: gateway start'), 'no daemon');
      const started = await runCli(['start'], { home: home.dir, env: gw.env });
      expect(started.code).toBe(0);
      await tmux.waitFor('wait', (s) => s.includes('● gateway 127.0.0.1:'), 'connected', 10_000);
      for (const line of tmux.screen('wait').split('\n')) expect(line.length).toBeLessThanOrEqual(80);
      tmux.keys('wait', 'q');
      await runCli(['stop'], { home: home.dir, env: gw.env });
    } finally { home.cleanup(); }
  });

  it('gateway start --foreground on a terminal shows the monitor; q drains and stops the daemon', async () => {
    const home = makeTempHome();
    try {
      tmux.start('fg', [process.execPath, GATEWAY_BIN, 'start', '--foreground'], { ...gw.env, GATEWAY_HOME: home.dir });
      const s = await tmux.waitFor('fg', (x) => x.includes('● gateway 127.0.0.1:'), 'the monitor of the foreground daemon');
      // The note may wrap anywhere, spaces included: compare without whitespace.
      expect(s.replace(/\s+/g, '')).toMatch(/gatewayrunningathttp:\/\/127\.0\.0\.1:\d+\(pid\d+\);log:.*daemon\.log;qorCtrl-Cstopsit/);
      const url = `http://127.0.0.1:${/● gateway 127\.0\.0\.1:(\d+)/.exec(s)![1]}`;
      const key = JSON.parse((await runCli(['keys', 'create', '--name', 'fg', '--json'], { home: home.dir, env: gw.env })).stdout) as { key: string };
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key.key, maxRetries: 0 });
      await client.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] });
      await tmux.waitFor('fg', (x) => /fg\s+uni\s+openai\/gpt-5\.4\s+200/.test(x), 'the request in the foreground monitor');
      tmux.keys('fg', 'q');
      await tmux.waitFor('fg', (x) => x.includes('stopping: draining in-flight requests') && x.includes('[exited 0]'), 'stopped');
      expect(existsSync(join(home.dir, 'daemon.json'))).toBe(false);
    } finally { home.cleanup(); }
  });
});
