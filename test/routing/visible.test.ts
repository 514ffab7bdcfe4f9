// What the gateway did on the way is visible everywhere: a real daemon (`gateway start`) whose
// Anthropic mock answers 529 (with retry-after: 1) and whose OpenAI pool's first key is refused,
// so a Messages request for Claude is retried, falls back to GPT and moves to the pool's second
// key. The access log (`gateway logs`), `gateway monitor --json`, the usage history (rows and
// `gateway usage --by provider-key`), `gateway status`, `doctor` and the dashboard's providers
// page and API then each say so.
import Anthropic from '@anthropic-ai/sdk';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, GATEWAY_BIN } from '../helpers/cli.js';
import { dashboardSession, startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

/** The mock accepts this key (its own); the pool's first key (env1) is one it refuses with a 401. */
const GOOD_OPENAI = 'real-openai-key-0123456789';
const BAD_OPENAI = 'sk-refused-by-openai-98765';
const CONFIG = {
  routing: {
    retries: 1,
    // Two failures open the breaker of a model: the first request's own two 529s do it.
    breaker: { failures: 2, windowSeconds: 60, cooldownSeconds: 600 },
    fallbacks: { 'anthropic/claude-sonnet-4-5': ['openai/gpt-5.4'] },
  },
};
const overloaded = { status: 529, headers: { 'content-type': 'application/json', 'retry-after': '1' }, body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) };

let gw: GatewayProcess;
let proxyKey: string;
let monitorOut = '';
let stopMonitor: () => Promise<number | null>;
const client = () => new Anthropic({ baseURL: gw.url, apiKey: proxyKey, maxRetries: 0 });
const ask = () => client().messages.create({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
const admin = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${gw.adminToken()}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
};

const FIRST_ROUTE = 'anthropic/claude-sonnet-4-5=529, anthropic/claude-sonnet-4-5=529, openai/gpt-5.4#env1=401, openai/gpt-5.4#env2=200';
const SECOND_ROUTE = 'anthropic/claude-sonnet-4-5=skipped, openai/gpt-5.4#env2=200';
const routes: string[] = [];

beforeAll(async () => {
  gw = await startGatewayProcess({ GATEWAY_OPENAI_API_KEY: `${BAD_OPENAI},${GOOD_OPENAI}` }, CONFIG);
  proxyKey = (await gw.cli(['keys', 'create', '--name', 'app'])).stdout.trim();
  gw.mocks.anthropic.setHandler(() => overloaded);
  // `gateway monitor --json`, attached before the routed requests: a warm-up request it reports
  // whole says it listens.
  const child = spawn(process.execPath, [GATEWAY_BIN, 'monitor', '--json'], { env: { ...baseEnv(), GATEWAY_HOME: gw.dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.setEncoding('utf8').on('data', (d: string) => { monitorOut += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  stopMonitor = () => { child.kill('SIGINT'); return exited; };
  const gemini = new Anthropic({ baseURL: gw.url, apiKey: proxyKey, maxRetries: 0 });
  const deadline = Date.now() + 10_000;
  while (!monitorOut.includes('"mode":"messages"') && Date.now() < deadline) {
    await gemini.messages.create({ model: 'gemini/gemini-3.5-flash', max_tokens: 8, messages: [{ role: 'user', content: 'warm up' }] });
    await new Promise((r) => setTimeout(r, 100));
  }
  for (let i = 0; i < 2; i++) {
    const { data, response } = await ask();
    expect(data.content[0]).toMatchObject({ type: 'text' });
    routes.push(response.headers.get('x-gateway-route') ?? '');
  }
}, 60_000);
afterAll(async () => { await stopMonitor?.(); await gw?.close(); });

describe('a request retried, fallen back and moved to another key', () => {
  it('the answers\' x-gateway-route (what everything below must agree with)', () => {
    expect(routes).toEqual([FIRST_ROUTE, SECOND_ROUTE]);
  });

  it('gateway logs says why each attempt ended, the time waited and the key that served', async () => {
    const log = (await gw.cli(['logs'])).stdout;
    const line = log.split('\n').find((l) => l.includes('route=anthropic/claude-sonnet-4-5=529,'));
    expect(line).toMatch(/ route=anthropic\/claude-sonnet-4-5=529,anthropic\/claude-sonnet-4-5=529,openai\/gpt-5\.4#env1=401,openai\/gpt-5\.4#env2=200 waited=(\d+)ms provider-key=env2$/);
    // The retry after the first 529 honoured its retry-after: 1 (the daemon's own record of the wait).
    expect(Number(/waited=(\d+)ms/.exec(line!)![1])).toBeGreaterThanOrEqual(1000);
    expect(log).toContain(' route=anthropic/claude-sonnet-4-5=skipped,openai/gpt-5.4#env2=200 provider-key=env2');
    // A request with one attempt carries no route (the log stays short).
    expect(log.split('\n').filter((l) => l.includes('model=gemini')).every((l) => !l.includes('route='))).toBe(true);
    expect(log).not.toContain(BAD_OPENAI.slice(-8));
  });

  it('gateway monitor --json lines carry the route, the served target, the wait and the key label', async () => {
    await expect.poll(() => monitorOut.split('\n').filter((l) => l.includes('"route"') && l.includes('claude-sonnet')).length, { timeout: 5000 }).toBe(2);
    const lines = monitorOut.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.provider === 'anthropic');
    expect(lines[0]).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-5', status: 200, ok: true, route: FIRST_ROUTE, served: { provider: 'openai', model: 'gpt-5.4' }, keyLabel: 'env2' });
    expect(lines[0]!.waitedMs).toBeGreaterThanOrEqual(1000);
    expect(lines[1]).toMatchObject({ route: SECOND_ROUTE, served: { provider: 'openai', model: 'gpt-5.4' }, keyLabel: 'env2' });
    expect(lines[1]).not.toHaveProperty('waitedMs');
  });

  it('the usage rows record the attempts, the wait and the key label, on the served provider', async () => {
    const { rows } = await admin<{ rows: Array<Record<string, unknown>> }>('/admin/usage/requests?limit=10');
    const routed = rows.filter((r) => typeof r.route === 'string' && (r.route as string).includes(','));
    expect(routed.map((r) => [r.provider, r.route, r.keyLabel])).toEqual([['openai', SECOND_ROUTE, 'env2'], ['openai', FIRST_ROUTE, 'env2']]);
    expect(routed[1]!.waitedMs).toBeGreaterThanOrEqual(1000);
    expect(routed[0]!.waitedMs).toBeNull();
  });

  it('gateway usage --by provider-key: usage per provider key label, JSON and table', async () => {
    const r = await gw.cli(['usage', '--by', 'provider-key', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as { by: string; rows: Array<{ group: string; label: string; requests: number; inputTokens: number }> };
    expect(s.by).toBe('provider-key');
    expect(s.rows.map((g) => [g.group, g.label, g.requests]).sort()).toEqual([['gemini', 'gemini (no pool)', s.rows.find((g) => g.group === 'gemini')!.requests], ['openai#env2', 'openai#env2', 2]]);
    expect(s.rows.find((g) => g.group === 'openai#env2')!.inputTokens).toBeGreaterThan(0);
    const table = (await gw.cli(['usage', '--by', 'provider-key'])).stdout;
    expect(table).toMatch(/^PROVIDER-KEY\s+REQUESTS/m);
    expect(table).toMatch(/^openai#env2\s+2\s/m);
  });

  it('gateway status lists the open breaker and the refused key', async () => {
    const out = (await gw.cli(['status'])).stdout;
    expect(out).toMatch(/^ {2}breaker {3}anthropic\/claude-sonnet-4-5 open until \d{4}-\d\d-\d\dT[\d:.]+Z$/m);
    expect(out).toContain('env1 …8765 refused (401)');
    const j = JSON.parse((await gw.cli(['status', '--json'])).stdout) as { breakers: Array<{ target: string }> };
    expect(j.breakers.map((b) => b.target)).toEqual(['anthropic/claude-sonnet-4-5']);
  });

  it('doctor warns about the open breaker', async () => {
    const checks = JSON.parse((await gw.cli(['doctor', '--json'])).stdout) as Array<{ id: string; ok: boolean; warning?: boolean; detail: string; fix?: string }>;
    const b = checks.find((c) => c.id === 'breakers');
    expect(b).toMatchObject({ ok: true, warning: true });
    expect(b!.detail).toContain('anthropic/claude-sonnet-4-5 until ');
    const text = (await gw.cli(['doctor'])).stdout;
    expect(text).toContain('circuit breakers open');
  });

  it('the dashboard\'s providers API and page show the pool and the open breaker', async () => {
    const { providers } = await admin<{ providers: Array<{ provider: string; keys: Array<{ label: string; masked: string; state: string; status?: number }>; breakers: Array<{ target: string; until: string }> }> }>('/admin/providers');
    const openai = providers.find((p) => p.provider === 'openai')!;
    expect(openai.keys.map((k) => [k.label, k.masked, k.state])).toEqual([['env1', '…8765', 'refused'], ['env2', '…6789', 'ok']]);
    expect(openai.breakers).toEqual([]);
    const anthropic = providers.find((p) => p.provider === 'anthropic')!;
    expect(anthropic.breakers.map((b) => b.target)).toEqual(['anthropic/claude-sonnet-4-5']);
    const cookie = await dashboardSession(gw);
    const page = await (await fetch(`${gw.url}/dashboard/providers`, { headers: { cookie } })).text();
    expect(page).toMatch(/data-key-label="env1" data-state="refused"><span class="mono">env1<\/span> <span class="mono muted">…8765<\/span> <span class="badge error">refused \(401\)<\/span>/);
    expect(page).toContain('data-key-label="env2" data-state="ok"');
    expect(page).toContain('data-breaker="anthropic/claude-sonnet-4-5"');
    expect(page).not.toContain(BAD_OPENAI.slice(-8));
  });

  it('the dashboard\'s usage page notes the attempts, the wait and the key on the request\'s row', async () => {
    const cookie = await dashboardSession(gw);
    const page = await (await fetch(`${gw.url}/dashboard/usage`, { headers: { cookie } })).text();
    expect(page).toMatch(new RegExp(`data-route="${FIRST_ROUTE.replace(/[.#/]/g, (c) => `\\${c}`)}"[^>]*>4 attempts · waited [\\d.]+ s · key env2</div>`));
    expect(page).toContain(`data-route="${SECOND_ROUTE}" title="${SECOND_ROUTE}">2 attempts · key env2</div>`);
  });
});
