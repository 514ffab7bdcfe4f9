// A real daemon (`gateway start`) reading config.json's routing: a bad section at start leaves the
// defaults, a good edit is picked up without a restart, a later bad hand edit keeps the last good
// routing; each problem is a warning line in the daemon's log and in `gateway doctor`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';
import OpenAI from 'openai';
import type { DaemonStatus } from '../../src/cli/daemon-client.js';

let gw: GatewayProcess;
const BAD_AT_START = { routing: { retries: -1, fallbacks: { 'claude-sonnet-4-5': ['openai/gpt-5.4'] } } };
beforeAll(async () => { gw = await startGatewayProcess({}, BAD_AT_START); });
afterAll(async () => { await gw?.close(); });

const handEdit = (c: unknown) => writeFileSync(join(gw.dir, 'config.json'), JSON.stringify(c, null, 2), { mode: 0o600 });
const daemonLog = () => readFileSync(join(gw.dir, 'daemon.log'), 'utf8');
async function routing(): Promise<DaemonStatus['routing']> {
  const res = await fetch(`${gw.url}/admin/status`, { headers: { authorization: `Bearer ${gw.adminToken()}` } });
  return ((await res.json()) as DaemonStatus).routing;
}
async function doctorRouting(): Promise<{ ok: boolean; warning?: boolean; detail: string }> {
  const checks = JSON.parse((await gw.cli(['doctor', '--json'])).stdout) as { id: string; ok: boolean; warning?: boolean; detail: string }[];
  return checks.find((c) => c.id === 'routing')!;
}

describe('the daemon keeps the last good routing', () => {
  it('a bad routing section at start: the defaults, and a warning naming the problem', async () => {
    await expect.poll(daemonLog, { timeout: 10_000 }).toContain('warning: config.json routing: routing.retries must be a whole number ≥ 0, not -1; keeping the last good routing');
    expect(await routing()).toEqual({ retries: 2, routes: {} });
  });

  it('a good hand edit is picked up without a restart', async () => {
    handEdit({ aliases: { coding: ['anthropic/claude-sonnet-4-5', 'openai/gpt-5.4'] }, routing: { retries: 3, fallbacks: { 'claude-sonnet-4-5': ['openai/gpt-5.4'] } } });
    await expect.poll(routing, { timeout: 10_000 }).toEqual({
      retries: 3,
      routes: { coding: ['anthropic/claude-sonnet-4-5', 'openai/gpt-5.4'], 'claude-sonnet-4-5': ['claude-sonnet-4-5', 'openai/gpt-5.4'] },
    });
    expect((await doctorRouting()).warning).toBeUndefined();
  });

  it('a list alias is served by its first target, as a one-target alias always was', async () => {
    const key = (await gw.cli(['keys', 'create', '--name', 'routing'])).stdout.trim();
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    const seen = gw.mocks.anthropic.requests.length;
    const answer = await client.chat.completions.create({ model: 'coding', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]!.message.content).toBeTruthy();
    const sent = gw.mocks.anthropic.requests.slice(seen);
    expect(sent).toHaveLength(1);
    expect((JSON.parse(sent[0]!.body.toString('utf8')) as { model: string }).model).toBe('claude-sonnet-4-5');
  });

  it('a bad hand edit keeps the last good routing, warned about in the log and in doctor', async () => {
    handEdit({
      aliases: { coding: ['anthropic/claude-sonnet-4-5', 'mistral/large'] },
      routing: { retries: 0, retryAfterCapSeconds: -5, fallbacks: { 'gpt-5.4': ['gemini/gemini-2.5-pro'] } },
    });
    // The warning is the sign the daemon read the edit; only then is what it routes by compared.
    await expect.poll(daemonLog, { timeout: 10_000 }).toContain('warning: config.json routing: routing.retryAfterCapSeconds must be a number ≥ 0, not -5; keeping the last good routing');
    expect(daemonLog()).toContain('warning: config.json routing: aliases.coding[1] "mistral/large" names an unknown provider "mistral"');
    expect(await routing()).toEqual({
      retries: 3,
      routes: { coding: ['anthropic/claude-sonnet-4-5', 'openai/gpt-5.4'], 'claude-sonnet-4-5': ['claude-sonnet-4-5', 'openai/gpt-5.4'] },
    });
    const doctor = await doctorRouting();
    expect(doctor).toMatchObject({ ok: true, warning: true });
    expect(doctor.detail).toContain('routing.retryAfterCapSeconds must be a number ≥ 0, not -5');
    expect(doctor.detail).toContain('aliases.coding[1] "mistral/large" names an unknown provider "mistral"');
  });

  it('a CLI edit that fixes it reloads the daemon', async () => {
    handEdit({ routing: { retries: 0 } });
    await expect.poll(routing, { timeout: 10_000 }).toEqual({ retries: 0, routes: {} });
    const r = await gw.cli(['models', 'fallback', 'gpt-5.4', 'gemini/gemini-2.5-pro']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('The running gateway reloaded.');
    expect(await routing()).toEqual({ retries: 0, routes: { 'gpt-5.4': ['gpt-5.4', 'gemini/gemini-2.5-pro'] } });
  });

  it('a misspelt field is named in the log and by doctor, and the rest of the edit is in force', async () => {
    handEdit({ routing: { retries: 1, retryy: 4, breaker: { failures: 2, cooldown: 9 } } });
    await expect.poll(routing, { timeout: 10_000 }).toEqual({ retries: 1, routes: {} });
    await expect.poll(daemonLog, { timeout: 10_000 }).toContain('warning: config.json routing.retryy is not a setting (known: retries, retryAfterCapSeconds, backoff, providers, breaker, fallbacks); ignored');
    expect(daemonLog()).toContain('warning: config.json routing.breaker.cooldown is not a setting (known: failures, windowSeconds, cooldownSeconds); ignored');
    const doctor = await doctorRouting();
    expect(doctor).toMatchObject({ ok: true, warning: true });
    expect(doctor.detail).toBe('config.json: routing.retryy is not a setting (known: retries, retryAfterCapSeconds, backoff, providers, breaker, fallbacks); routing.breaker.cooldown is not a setting (known: failures, windowSeconds, cooldownSeconds); ignored');
  });
});
