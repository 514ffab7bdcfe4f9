// `gateway usage` and keys with limits, run as a user runs them against a real daemon: requests a
// key's own limit refused are counted per limit (budget, rpm, tpm, concurrency, and an unpriced
// model under a budget), in the table and in --json; and by key, the many short-lived session keys
// of `chat` and `run` are one row each, not one row per session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.js';

let gw: GatewayProcess;
beforeAll(async () => { gw = await startGatewayProcess(); }, 60_000);
afterAll(async () => { await gw?.close(); });

const body = (model: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], ...extra });
const call = (key: string, model = 'openai/gpt-4o', extra: Record<string, unknown> = {}) => fetch(`${gw.url}/v1/chat/completions`, {
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body(model, extra),
});

async function createKey(...args: string[]): Promise<string> {
  const r = await gw.cli(['keys', 'create', ...args]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

interface Summary {
  rows: Array<{ group: string; label: string; requests: number; errors: number }>;
  totals: { requests: number; errors: number };
  refusals: { budget: number; rpm: number; tpm: number; concurrency: number; unpricedModel: number };
}
const summary = async (by = 'model'): Promise<Summary> => JSON.parse((await gw.cli(['usage', '--by', by, '--json'])).stdout) as Summary;

describe('refusals by limit', () => {
  it('are counted per limit in gateway usage and its --json, and each usage row names its limit', async () => {
    expect((await summary()).refusals).toEqual({ budget: 0, rpm: 0, tpm: 0, concurrency: 0, unpricedModel: 0 });
    expect((await gw.cli(['usage'])).stdout).not.toContain('Refused');

    const rpm = await createKey('--name', 'rpm-1', '--rpm', '1');
    expect((await call(rpm)).status).toBe(200);
    expect((await call(rpm)).status).toBe(429);

    // Less than any request's worst case: one runs alone in an empty minute, the next is refused.
    const tpm = await createKey('--name', 'tpm-10', '--tpm', '10');
    expect((await call(tpm)).status).toBe(200);
    expect((await call(tpm)).status).toBe(429);

    const budget = await createKey('--name', 'tiny-budget', '--budget', '0.00001');
    expect((await call(budget)).status).toBe(429);
    const unpriced = await call(budget, 'openai/gpt-9-unlisted');
    expect(unpriced.status).toBe(403);
    expect((await unpriced.json() as { error: { message: string } }).error.message).toMatch(/usage\.prices/);

    // One stream held open by the mock, so the key's one place is taken when the second arrives.
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    gw.mocks.openai.setHandler((r) => {
      if (!r.body.toString().includes('"stream":true')) return undefined;
      const chunk = (content: string, finish: string | null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
      return { headers: { 'content-type': 'text/event-stream' }, chunks: [chunk('one ', null), chunk('two', 'stop'), 'data: [DONE]\n\n'], beforeChunk: (i) => (i === 1 ? held : undefined) };
    });
    const once = await createKey('--name', 'one-at-once', '--concurrency', '1');
    const before = gw.mocks.openai.requests.length;
    const first = await call(once, 'openai/gpt-4o', { stream: true });
    expect(first.status).toBe(200);
    await gw.mocks.openai.waitForRequests(before + 1);
    const second = await call(once);
    expect(second.status).toBe(429);
    expect(second.headers.get('x-gateway-limit')).toBe('concurrency');
    expect(second.headers.get('retry-after')).toBe('1');
    release();
    expect(await first.text()).toContain('[DONE]');
    gw.mocks.openai.setHandler(undefined);

    const s = await summary();
    expect(s.refusals).toEqual({ budget: 1, rpm: 1, tpm: 1, concurrency: 1, unpricedModel: 1 });
    expect(s.totals.errors).toBe(5);
    const table = (await gw.cli(['usage'])).stdout;
    expect(table).toContain("Refused by a key's limit: budget 1, rpm 1, tpm 1, concurrency 1; refused for a model without a price (a key with a budget): 1.");

    const adminAuth = { authorization: `Bearer ${gw.adminToken()}` };
    const rows = (await (await fetch(`${gw.url}/admin/usage/requests?status=error`, { headers: adminAuth })).json()) as { rows: Array<{ keyName: string; status: number; errorCode: string; limit: string | null }> };
    expect(rows.rows.map((r) => [r.keyName, r.status, r.errorCode, r.limit]).sort()).toEqual([
      ['one-at-once', 429, 'rate_limited', 'concurrency'],
      ['rpm-1', 429, 'rate_limited', 'rpm'],
      ['tiny-budget', 403, 'model_unpriced', null],
      ['tiny-budget', 429, 'budget_exceeded', 'budget'],
      ['tpm-10', 429, 'rate_limited', 'tpm'],
    ]);
  });
});

describe('usage --by key', () => {
  it('sums the session keys of chat and of run into one row each', async () => {
    const adminAuth = { authorization: `Bearer ${gw.adminToken()}`, 'content-type': 'application/json' };
    const session = async (purpose: 'chat' | 'run') => {
      const res = await fetch(`${gw.url}/admin/session-keys`, { method: 'POST', headers: adminAuth, body: JSON.stringify({ purpose }) });
      expect(res.status).toBe(201);
      return ((await res.json()) as { key: string }).key;
    };
    const [chatA, chatB, run] = [await session('chat'), await session('chat'), await session('run')];
    for (const k of [chatA, chatA, chatB, run]) expect((await call(k)).status).toBe(200);
    // A key a user named like a session key is not one: its name is not chat.<its own id>.
    const lookalike = await createKey('--name', 'chat.deadbeef');
    expect((await call(lookalike)).status).toBe(200);

    const byKey = await summary('key');
    const rows = Object.fromEntries(byKey.rows.map((r) => [r.label, r]));
    expect(rows['chat (sessions)']).toMatchObject({ group: 'chat (sessions)', requests: 3 });
    expect(rows['run (sessions)']).toMatchObject({ group: 'run (sessions)', requests: 1 });
    expect(rows['chat.deadbeef']!.group).toMatch(/^[0-9a-f]{8}$/);
    expect(rows['chat.deadbeef']!.requests).toBe(1);
    expect(byKey.rows.filter((r) => /^(chat|run)\.[0-9a-f]{8}$/.test(r.label) && r.label !== 'chat.deadbeef')).toEqual([]);
    expect(byKey.rows.reduce((n, r) => n + r.requests, 0)).toBe(byKey.totals.requests);

    const table = (await gw.cli(['usage', '--by', 'key'])).stdout;
    expect(table).toMatch(/^chat \(sessions\)\s+3\s/m);
    expect(table).toMatch(/^run \(sessions\)\s+1\s/m);
    expect(table).toMatch(/^chat\.deadbeef \([0-9a-f]{8}\)\s+1\s/m);
  });
});
