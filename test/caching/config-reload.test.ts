// A real daemon (`gateway start`) reading config.json's cache section: a bad section at start
// leaves the defaults (breakpoints on, 5 minutes) with a warning naming the field, a good hand
// edit is picked up without a restart, a later bad one keeps the last good settings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

const SYSTEM = Array.from({ length: 300 }, (_, i) => `Rule ${i}: keep the code tidy and the tests honest.`).join('\n');

let gw: GatewayProcess;
let key: string;
beforeAll(async () => {
  gw = await startGatewayProcess({}, { cache: { ttl: '10m' } });
  key = (await gw.cli(['keys', 'create', '--name', 'cache'])).stdout.trim();
});
afterAll(async () => { await gw?.close(); });

const handEdit = (c: unknown) => writeFileSync(join(gw.dir, 'config.json'), JSON.stringify(c, null, 2), { mode: 0o600 });
const daemonLog = () => readFileSync(join(gw.dir, 'daemon.log'), 'utf8');
/** The marks a Chat request with a long system prompt reached Anthropic with. */
async function marksSent(): Promise<unknown[]> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'anthropic/claude-sonnet-5', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Hello?' }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  const sent = JSON.parse(gw.mocks.anthropic.requests.at(-1)!.body.toString('utf8')) as { system: Array<{ cache_control?: unknown }>; messages: Array<{ content: Array<{ cache_control?: unknown }> }> };
  return [...sent.system, ...sent.messages.flatMap((m) => m.content)].map((b) => b.cache_control).filter((c) => c !== undefined);
}

describe('the daemon and config.json\'s cache section', () => {
  it('a bad section at start: the defaults, and a warning naming the field', async () => {
    await expect.poll(daemonLog, { timeout: 10_000 }).toContain('warning: config.json cache.ttl must be "5m" or "1h" (Anthropic\'s two cache lifetimes), not "10m"; keeping the last good cache settings');
    expect(await marksSent()).toEqual([{ type: 'ephemeral' }, { type: 'ephemeral' }]);
  });

  it('a good hand edit is picked up without a restart', async () => {
    handEdit({ cache: { ttl: '1h' } });
    await expect.poll(marksSent, { timeout: 10_000 }).toEqual([{ type: 'ephemeral', ttl: '1h' }, { type: 'ephemeral', ttl: '1h' }]);
    handEdit({ cache: { providers: { anthropic: { breakpoints: false } } } });
    await expect.poll(marksSent, { timeout: 10_000 }).toEqual([]);
  });

  it('a bad hand edit keeps the last good settings, with a warning', async () => {
    handEdit({ cache: { breakpoints: 'no' } });
    await expect.poll(daemonLog, { timeout: 10_000 }).toContain('warning: config.json cache.breakpoints must be true or false, not "no"; keeping the last good cache settings');
    expect(await marksSent()).toEqual([]);
  });
});
