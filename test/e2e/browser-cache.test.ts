// The prompt cache on the dashboard, in a real browser (Debian's chromium through playwright-core)
// against a real daemon process: a Claude turn that read 1,200 of its 1,540 input tokens from the
// cache and wrote 300 shows its cache reads and writes on the Live page as it finishes, and the
// Usage page shows them with the hit ratio and what the cache saved, in the totals, by model and
// per request.
import Anthropic from '@anthropic-ai/sdk';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { defaultReply, type MockTokens } from '../helpers/mock-provider.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

const CHROMIUM = process.env.GATEWAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');
const TOKENS: MockTokens = { input: 40, cacheRead: 1200, cacheWrite5m: 100, cacheWrite1h: 200, output: 30 };
// data/prices.json's claude-opus-4-6: 5 in, 0.5 cache read, 6.25 5-minute write, 1-hour write at 2× input.
const SAVED = (1500 * 5 - (1200 * 0.5 + 100 * 6.25 + 200 * 10)) / 1e6;

let gw: GatewayProcess;
let browser: Browser;
let page: Page;
let client: Anthropic;

const text = (l: Locator) => l.first().innerText({ timeout: 500 }).then((t) => t.trim(), () => '');
const attr = (l: Locator, name: string) => l.first().getAttribute(name, { timeout: 500 }).catch(() => null);
const poll = <T>(fn: () => Promise<T>) => expect.poll(fn, { timeout: 8000, interval: 50 });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  gw = await startGatewayProcess();
  gw.mocks.anthropic.setHandler((r) => defaultReply('anthropic', r, TOKENS));
  const key = (await gw.cli(['keys', 'create', '--name', 'claude-code'])).stdout.trim();
  client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await (await browser.newContext({ viewport: { width: 1360, height: 860 } })).newPage();
  page.setDefaultTimeout(8000);
  page.on('pageerror', (e) => { throw e; });
  await page.goto((await gw.cli(['dashboard', '--no-open'])).stdout.trim());
  await page.waitForURL(`${gw.url}/dashboard/usage`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe('the prompt cache on the dashboard', () => {
  it('the Live page shows a finished request\'s cache reads and writes beside its tokens', async () => {
    await page.goto(`${gw.url}/dashboard/live`);
    await poll(() => attr(page.locator('#live-conn'), 'data-state')).toBe('open');
    await client.messages.stream({ model: 'claude-opus-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    const row = page.locator('#live-table tbody tr', { hasText: 'claude-opus-4-6' });
    await poll(() => text(row.locator('.badge'))).toBe('200');
    await poll(() => text(row.locator('[data-cache-note]'))).toBe('1.2k cache read · 300 written');
    expect(await text(row)).toContain('1.54k / 30');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-live-cache.png'), fullPage: true });
  });

  it('the Usage page shows the cache reads, writes, hit ratio and savings in the totals, by model and per request', async () => {
    await page.goto(`${gw.url}/dashboard/usage?range=24h`);
    await poll(() => text(page.locator('[data-stat="requests"]'))).toBe('1');
    const input = page.locator('.stat', { has: page.locator('[data-stat="input"]') });
    expect(await text(input.locator('.stat-foot'))).toBe('1.2k cache read · 300 written · 77.9% hit');
    expect(await attr(input.locator('[data-cache-hit]'), 'data-cache-hit')).toBe('0.7792');
    expect(Number(await attr(page.locator('[data-cache-saved]'), 'data-cache-saved'))).toBeCloseTo(SAVED, 8);
    expect(await text(page.locator('[data-cache-saved]'))).toBe(`cache saved $${SAVED.toPrecision(2)}`); // $0.0043
    const model = page.locator('#by-model tr[data-group="anthropic/claude-opus-4-6"]');
    expect(await text(model.locator('[data-cache-hit]'))).toBe('77.9% cache hit');
    expect(await attr(model.locator('[data-cache-hit]'), 'title')).toBe(`1,200 cache read · 300 written · saved $${SAVED.toPrecision(2)}`);
    expect(await text(page.locator('#requests-table [data-cache-note]'))).toBe('1.2k cache read · 300 written');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-usage-cache.png'), fullPage: true });
  });
});
