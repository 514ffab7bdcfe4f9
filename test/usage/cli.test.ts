// `gateway usage --since 7d --by model|key|provider|provider-key|day|session [--json]` agrees with the dashboard: the
// JSON the dashboard's API serves, and the numbers the Usage page shows. After `gateway stop`,
// the offline path (reading usage.db directly) still agrees, so nothing was lost on stop.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempHome, runCli } from '../helpers/cli.js';
import { dashboardSession, startGatewayProcess, type GatewayProcess } from './gateway-process.js';

let gw: GatewayProcess;
let cookie: string;
const BY = ['model', 'key', 'provider', 'provider-key', 'day', 'session'] as const;

interface Summary { since: string; until: string; by: string; rows: Array<{ group: string; label: string; requests: number; cost: number | null }>; totals: Record<string, number | null> }

async function usageJson(by: string): Promise<Summary> {
  const r = await gw.cli(['usage', '--since', '7d', '--by', by, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Summary;
}

async function dashboardJson(by: string): Promise<Summary> {
  const res = await fetch(`${gw.url}/admin/usage/summary?since=7d&by=${by}`, { headers: { cookie } });
  expect(res.status).toBe(200);
  return (await res.json()) as Summary;
}

const comparable = (s: Summary) => ({ since: s.since, by: s.by, rows: s.rows, totals: s.totals });

beforeAll(async () => {
  gw = await startGatewayProcess();
  cookie = await dashboardSession(gw);
  const first = (await gw.cli(['keys', 'create', '--name', 'agree-cli'])).stdout.trim();
  const second = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${gw.adminToken()}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'agree-api' }) });
  const secondKey = ((await second.json()) as { key: string }).key;
  gw.mocks.openai.setHandler((r) => (r.body.toString().includes('"fail-model"') ? { status: 500, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"boom","type":"server_error"}}' } : undefined));
  const call = (key: string, path: string, body: unknown, extra: Record<string, string> = {}) => fetch(`${gw.url}${path}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...extra }, body: JSON.stringify(body),
  }).then((r) => r.text());
  const msg = [{ role: 'user', content: 'hi' }];
  for (let i = 0; i < 5; i++) await call(first, '/openai/v1/chat/completions', { model: 'gpt-4o', messages: msg });
  for (let i = 0; i < 3; i++) await call(first, '/v1/chat/completions', { model: 'openai/gpt-9-unlisted', messages: msg });
  for (let i = 0; i < 4; i++) await call(secondKey, '/anthropic/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 50, messages: msg });
  for (let i = 0; i < 2; i++) await call(secondKey, '/gemini/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ parts: [{ text: 'hi' }] }] }, { 'x-goog-api-key': secondKey });
  for (let i = 0; i < 2; i++) await call(first, '/openai/v1/chat/completions', { model: 'fail-model', messages: msg });
});
afterAll(async () => { await gw?.close(); });

describe('gateway usage agrees with the dashboard', () => {
  it('--json equals the dashboard API for every grouping', async () => {
    for (const by of BY) {
      const [cli, dash] = [await usageJson(by), await dashboardJson(by)];
      expect(comparable(cli), by).toEqual(comparable(dash));
      expect(cli.totals.requests).toBe(16);
      expect(cli.totals.errors).toBe(2);
    }
    const byModel = await usageJson('model');
    expect(byModel.rows.map((r) => [r.group, r.requests])).toEqual(expect.arrayContaining([
      ['openai/gpt-4o', 5], ['openai/gpt-9-unlisted', 3], ['anthropic/claude-sonnet-4-5', 4], ['gemini/gemini-2.5-flash', 2],
      // a native body streams through unparsed, so a request that fails upstream has no model name
      ['openai/(unknown)', 2],
    ]));
    expect(byModel.rows.find((r) => r.group === 'openai/gpt-9-unlisted')!.cost).toBeNull(); // not in the price table
    const byKey = await usageJson('key');
    expect(Object.fromEntries(byKey.rows.map((r) => [r.label, r.requests]))).toEqual({ 'agree-cli': 10, 'agree-api': 6 });
  });

  it('the Usage page shows the same numbers', async () => {
    const page = await (await fetch(`${gw.url}/dashboard/usage?range=7d`, { headers: { cookie } })).text();
    const stat = (name: string) => /data-stat="([a-z]+)" data-value="([^"]*)"/g;
    const stats = Object.fromEntries([...page.matchAll(stat(''))].map((m) => [m[1], m[2]]));
    const cli = await usageJson('model');
    expect(Number(stats.requests)).toBe(cli.totals.requests);
    expect(Number(stats.input)).toBe(cli.totals.inputTokens);
    expect(Number(stats.output)).toBe(cli.totals.outputTokens);
    expect(Number(stats.cost)).toBe(cli.totals.cost);
    const table = page.slice(page.indexOf('id="by-model"'));
    const rows = [...table.slice(0, table.indexOf('</table>')).matchAll(/data-group="([^"]+)" data-requests="(\d+)" data-cost="([^"]*)"/g)]
      .map((m) => ({ group: m[1], requests: Number(m[2]), cost: m[3] === '' ? null : Number(m[3]) }));
    expect(rows).toEqual(cli.rows.map((r) => ({ group: r.group, requests: r.requests, cost: r.cost })));
    const chart = /id="chart-requests" data-total="(\d+)"/.exec(page);
    expect(Number(chart![1])).toBe(16);
  });

  it('the table names the period and totals what the JSON says', async () => {
    const r = await gw.cli(['usage', '--since', '7d', '--by', 'provider']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage since .+ \(7d\), by provider · prices of \d{4}-\d{2}-\d{2}/);
    const total = r.stdout.split('\n').find((l) => l.startsWith('TOTAL'))!.split(/\s+/);
    expect(total.slice(1, 3)).toEqual(['16', '2']);
    expect(r.stdout).toMatch(/\* 5 of 16 requests could not be priced/);
  });

  it('rejects what it cannot read, with exit code 2', async () => {
    const bad = await gw.cli(['usage', '--since', 'last-tuesday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--since takes a duration like 24h, 7d/);
    expect((await gw.cli(['usage', '--by', 'colour'])).code).toBe(2);
  });

  it('gateway dashboard opens a one-time link in the browser ($BROWSER here), or prints it when it cannot', async () => {
    const opener = join(gw.dir, 'fake-browser.sh');
    writeFileSync(opener, `#!/bin/sh\necho "$1" > "${join(gw.dir, 'opened-url')}"\n`);
    chmodSync(opener, 0o755);
    const opened = await gw.cli(['dashboard'], { BROWSER: opener });
    expect(opened.code).toBe(0);
    expect(opened.stdout).toContain('Opened the dashboard in your browser.');
    const url = readFileSync(join(gw.dir, 'opened-url'), 'utf8').trim();
    expect(url).toMatch(new RegExp(`^${gw.url}/dashboard/login\\?token=`));
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(200);
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(401); // once
    const headless = await gw.cli(['dashboard'], { BROWSER: undefined, DISPLAY: undefined, WAYLAND_DISPLAY: undefined });
    expect(headless.code).toBe(0);
    expect(headless.stdout.trim()).toMatch(/\/dashboard\/login\?token=/);
    expect(headless.stderr).toMatch(/No browser could be opened here/);
  });

  it('after gateway stop, reading usage.db directly gives the same numbers: nothing was lost', async () => {
    const before = await Promise.all(BY.map(usageJson));
    const stop = await gw.cli(['stop']);
    expect(stop.code).toBe(0);
    expect(gw.alive()).toBe(false);
    const after = await Promise.all(BY.map(usageJson));
    for (let i = 0; i < BY.length; i++) expect(comparable(after[i]!)).toEqual(comparable(before[i]!));
  });
});

describe('without a daemon or any history', () => {
  it('gateway usage says there is nothing, and creates no file', async () => {
    const home = makeTempHome();
    try {
      const table = await runCli(['usage'], { home: home.dir });
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toContain('No requests in this period.');
      const json = await runCli(['usage', '--by', 'day', '--json'], { home: home.dir });
      expect(JSON.parse(json.stdout)).toMatchObject({ by: 'day', rows: [], totals: { requests: 0, cost: 0 } });
      expect(existsSync(join(home.dir, 'usage.db'))).toBe(false);
      const dash = await runCli(['dashboard'], { home: home.dir });
      expect(dash.code).toBe(1);
      expect(dash.stderr).toMatch(/not running; start it first: gateway start/);
    } finally {
      home.cleanup();
    }
  });
});
