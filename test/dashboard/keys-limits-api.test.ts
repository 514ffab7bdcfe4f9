// A key's limits through the admin API: POST /admin/keys takes them as fields named like the CLI's
// flags, a value that cannot be used is a 400 naming its field, PATCH /admin/keys/{id} changes them
// (null removes) with effect on the very next request, and GET /admin/keys says what each key used
// and has left, in the numbers the usage history records.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/daemon/store/keys.js';
import { startDashboardGateway, type DashboardGateway } from './harness.js';

let gw: DashboardGateway;
let auth: Record<string, string>;
beforeAll(async () => {
  gw = await startDashboardGateway({ usageConfig: { prices: { 'openai/gpt-5.4': { input: 2, output: 10 } } } });
  auth = { authorization: `Bearer ${gw.daemon.adminToken}` };
});
afterAll(async () => { await gw?.close(); });

const chat = (key: string, model = 'gpt-5.4') => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 })
  .chat.completions.create({ model: `openai/${model}`, messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 });

const storedKeys = () => new KeyStore(gw.dir).list();

async function listed(id: string): Promise<{ limits: unknown; standing: any }> {
  const list = await gw.raw('GET', '/admin/keys', { headers: auth });
  expect(list.status).toBe(200);
  return list.json.keys.find((k: { id: string }) => k.id === id);
}

describe('POST /admin/keys with limits', () => {
  it('creates a key with a budget, rpm, tpm, concurrency and time zone', async () => {
    const r = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'ci', budget: '5/day', rpm: 60, tpm: '200000', concurrency: 4, tz: 'Europe/Berlin' } });
    expect(r.status).toBe(201);
    expect(r.json.record.limits).toEqual({ budget: { usd: 5, period: 'day' }, rpm: 60, tpm: 200000, concurrency: 4, tz: 'Europe/Berlin' });
    expect(r.json.record.standing).toEqual({
      budget: { max: 5, period: 'day', spent: 0, held: 0, left: 5, resetsAt: expect.stringMatching(/T2[23]:00:00\.000Z$/) },
      rpm: { max: 60, used: 0, left: 60 }, tpm: { max: 200000, used: 0, left: 200000 }, concurrency: { max: 4, used: 0, left: 4 },
    });
    const plain = await listed(storedKeys().find((k) => k.name === 'test')!.id);
    expect(plain).toMatchObject({ limits: null, standing: null });
  });

  it('answers a value it cannot use with a 400 naming the field, and creates nothing', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ budget: 'abc' }, 'budget', /budget must be an amount in USD/],
      [{ budget: '5/fortnight' }, 'budget', /optional period: 5\/day/],
      [{ budget: -5 }, 'budget', /budget must be an amount/],
      [{ budget: { usd: 5 } }, 'budget', /budget must be a string such as "5\/day"/],
      [{ rpm: -1 }, 'rpm', /rpm must be a whole number greater than 0, got -1/],
      [{ rpm: 1.5 }, 'rpm', /rpm must be a whole number/],
      [{ rpm: 'sixty' }, 'rpm', /rpm must be a whole number/],
      [{ tpm: 0 }, 'tpm', /tpm must be a whole number greater than 0/],
      [{ concurrency: '2x' }, 'concurrency', /concurrency must be/],
      [{ budget: '5/day', tz: 'Mars/Base' }, 'tz', /tz must be an IANA time zone/],
      [{ rpm: 5, tz: 'UTC' }, 'tz', /no budget/],
    ];
    const before = storedKeys().length;
    for (const [fields, field, message] of cases) {
      const r = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'bad-limits', ...fields } });
      expect(r.status, JSON.stringify(fields)).toBe(400);
      expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', field });
      expect(r.json.error.message).toMatch(message);
    }
    expect(storedKeys().length).toBe(before);
  });
});

describe('PATCH /admin/keys/{id}', () => {
  it('sets a limit that holds from the next request: rpm 1 admits one request, then a 429 from the window', async () => {
    const { json } = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'agent' } });
    await chat(json.key);
    await chat(json.key); // no limit yet
    const upstream = gw.mocks.openai.requests.length;
    const r = await gw.raw('PATCH', `/admin/keys/${json.record.id}`, { headers: auth, body: { rpm: 1 } });
    expect(r.status).toBe(200);
    expect(r.json.key).toMatchObject({ id: json.record.id, limits: { rpm: 1 }, standing: { rpm: { max: 1, used: 0, left: 1 } } });
    await chat(json.key);
    const refused = await chat(json.key).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    const e = refused as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e.headers?.get('x-gateway-limit')).toBe('rpm');
    expect(Number(e.headers?.get('retry-after'))).toBeGreaterThan(0);
    expect(gw.mocks.openai.requests.length).toBe(upstream + 1); // the refused one never went upstream
    expect((await listed(json.record.id)).standing).toEqual({ rpm: { max: 1, used: 1, left: 0 } });

    // null removes: the key is unlimited again at once.
    const off = await gw.raw('PATCH', `/admin/keys/${json.record.id}`, { headers: auth, body: { rpm: null } });
    expect(off.json.key).toMatchObject({ limits: null, standing: null });
    await chat(json.key);
  });

  it('changes one limit and keeps the others; a budget\'s standing is what the usage history charged', async () => {
    const { json } = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'spender', rpm: 100, concurrency: 2 } });
    const r = await gw.raw('PATCH', `/admin/keys/${json.record.id}`, { headers: auth, body: { budget: '2/week', concurrency: null } });
    expect(r.json.key.limits).toEqual({ budget: { usd: 2, period: 'week' }, rpm: 100 });
    for (let i = 0; i < 3; i++) await chat(json.key);
    gw.recorder.flush();
    const rows = await gw.raw('GET', `/admin/usage/requests?key=${json.record.id}`, { headers: auth });
    const charged = rows.json.rows.reduce((sum: number, row: { cost: number }) => sum + row.cost, 0);
    expect(charged).toBeGreaterThan(0);
    const { standing } = await listed(json.record.id);
    expect(standing.budget).toMatchObject({ max: 2, period: 'week', held: 0 });
    expect(standing.budget.spent).toBeCloseTo(charged, 8);
    expect(standing.budget.left).toBeCloseTo(2 - charged, 8);
    // Weeks start on Monday, at midnight UTC for a key without a time zone.
    const reset = new Date(standing.budget.resetsAt);
    expect([reset.getUTCDay(), reset.getUTCHours(), reset.getUTCMinutes()]).toEqual([1, 0, 0]);
    expect(standing.rpm).toEqual({ max: 100, used: 3, left: 97 });
  });

  it('says exactly what is wrong', async () => {
    const { json } = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'patched' } });
    const path = `/admin/keys/${json.record.id}`;
    const bad = await gw.raw('PATCH', path, { headers: auth, body: { tpm: 'lots' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.field).toBe('tpm');
    const typo = await gw.raw('PATCH', path, { headers: auth, body: { rmp: 5 } });
    expect(typo.status).toBe(400);
    expect(typo.json.error).toMatchObject({ field: 'rmp', message: expect.stringMatching(/only a key's limits can be changed here/) });
    const nothing = await gw.raw('PATCH', path, { headers: auth, body: {} });
    expect(nothing.status).toBe(400);
    expect(nothing.json.error.message).toMatch(/nothing to change/);
    const zone = await gw.raw('PATCH', path, { headers: auth, body: { tz: 'Asia/Tokyo' } });
    expect(zone.status).toBe(400);
    expect(zone.json.error.field).toBe('tz');
    expect((await gw.raw('PATCH', '/admin/keys/nope', { headers: auth, body: { rpm: 5 } })).status).toBe(404);
    expect((await gw.raw('PUT', path, { headers: auth, body: { rpm: 5 } })).status).toBe(405);
    expect((await listed(json.record.id)).limits).toBeNull(); // nothing was written
  });

  it('needs the admin token, or the session cookie with its CSRF token', async () => {
    const { json } = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'guarded' } });
    const path = `/admin/keys/${json.record.id}`;
    expect((await gw.raw('PATCH', path, { body: { rpm: 5 } })).status).toBe(401);
    const { cookie, csrf } = await gw.login();
    expect((await gw.raw('PATCH', path, { headers: { cookie }, body: { rpm: 5 } })).status).toBe(403);
    const ok = await gw.raw('PATCH', path, { headers: { cookie, 'x-csrf-token': csrf }, body: { rpm: 5 } });
    expect(ok.status).toBe(200);
    expect(ok.json.key.limits).toEqual({ rpm: 5 });
  });
});
