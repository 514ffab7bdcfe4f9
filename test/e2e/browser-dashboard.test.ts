// The dashboard in a real browser (Debian's chromium through playwright-core) against a real
// daemon process and the mock providers: sign in through the one-time link, create a key and copy
// it, use it from the openai SDK, watch it on the Live page and in the Usage chart, test a
// provider, revoke the key and see the next call fail with 401. Screenshots of every page go to
// test-artifacts/ (CI keeps them).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

const CHROMIUM = process.env.GATEWAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');

/**
 * The browser globals the functions given to page.evaluate read. They run in the page, but this
 * file is type-checked with Node's globals (the DOM library would clash with them), so each such
 * function reads them through `globalThis as unknown as PageGlobals`, a type-only view.
 */
interface PageGlobals {
  performance: { getEntriesByType(type: 'navigation'): Array<{ startTime: number; loadEventEnd: number }> };
  navigator: { clipboard: { readText(): Promise<string> } };
}

let gw: GatewayProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let loginUrl = '';
let key = '';
const loadTimes: Record<string, number> = {};

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });
}

/** Navigation start → load event, as the browser measured it. */
async function loadTime(): Promise<number> {
  return page.evaluate(() => {
    const nav = (globalThis as unknown as PageGlobals).performance.getEntriesByType('navigation')[0]!;
    return nav.loadEventEnd - nav.startTime;
  });
}

async function open(path: string): Promise<void> {
  await page.goto(`${gw.url}${path}`);
  await page.waitForLoadState('load');
  loadTimes[path] = await loadTime();
}

// playwright-core has no locator assertions (those live in @playwright/test): poll with vitest.
const text = (l: Locator) => l.first().innerText({ timeout: 500 }).then((t) => t.trim(), () => '');
const attr = (l: Locator, name: string) => l.first().getAttribute(name, { timeout: 500 }).catch(() => null);
const poll = <T>(fn: () => Promise<T>) => expect.poll(fn, { timeout: 8000, interval: 50 });

const sdk = (apiKey: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  gw = await startGatewayProcess({}, { usage: { prices: { 'openai/gpt-5.4': { input: 1.5, output: 12, cachedInput: 0.15 } } } });
  // A slow stream, so the Live page shows a request in flight. It ends without the upstream's own
  // [DONE] (the gateway adds one at the end): the SDK hangs up as soon as it reads [DONE], and the
  // mock pauses after every chunk, the last included.
  gw.mocks.openai.setHandler((r) => {
    if (!r.body.toString().includes('"slow-stream"')) return undefined;
    // Served as a dated snapshot of the name asked for, as providers do.
    const chunk = (content: string, finish: string | null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'slow-stream-2026-11-01', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
    const usage = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'slow-stream-2026-11-01', choices: [], usage: { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 } })}\n\n`;
    return { headers: { 'content-type': 'text/event-stream' }, chunks: [chunk('Thinking ', null), chunk('slowly… ', null), chunk('done.', null), chunk('', 'stop'), usage], delayMs: 700 };
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  context = await browser.newContext({ viewport: { width: 1360, height: 860 }, deviceScaleFactor: 1 });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
  page = await context.newPage();
  page.setDefaultTimeout(8000);
  page.on('pageerror', (e) => { throw e; });
  const r = await gw.cli(['dashboard', '--no-open']);
  loginUrl = r.stdout.trim();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  if (Object.keys(loadTimes).length) console.log(`dashboard load times (ms): ${JSON.stringify(Object.fromEntries(Object.entries(loadTimes).map(([k, v]) => [k, Math.round(v)])))}`);
});

describe('the dashboard in a browser', () => {
  it('signs in through the one-time link, which then stops working', async () => {
    expect(loginUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard\/login\?token=[A-Za-z0-9_-]{43}$/);
    await page.goto(loginUrl);
    await page.waitForURL(`${gw.url}/dashboard/usage`);
    loadTimes['/dashboard/usage (first)'] = await loadTime();
    await poll(() => text(page.locator('h1'))).toBe('Usage');
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    await shot('usage-empty');
    const other = await browser.newContext();
    const second = await other.newPage();
    const res = await second.goto(loginUrl);
    expect(res!.status()).toBe(401);
    await poll(() => text(second.locator('h1'))).toBe('This sign-in link has expired');
    await second.screenshot({ path: join(ARTIFACTS, 'dashboard-signin-expired.png') });
    await other.close();
  });

  it('creates a key, shows it once with a working copy button', async () => {
    await open('/dashboard/keys');
    await page.getByRole('button', { name: 'Create key' }).first().click();
    const dialog = page.locator('#create-key');
    await dialog.waitFor({ state: 'visible' });
    await dialog.locator('input[name="name"]').fill('browser-app');
    await dialog.locator('select[name="expires"]').selectOption('30d');
    await shot('keys-create-dialog');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const shown = dialog.locator('#new-key');
    await poll(() => shown.inputValue()).toMatch(/^sk-proxy-[A-Za-z0-9_-]{43}$/);
    key = await shown.inputValue();
    await poll(() => text(dialog.locator('#new-key-snippet'))).toContain(`OPENAI_BASE_URL=${gw.url}/v1`);
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByRole('button', { name: 'Copied ✓' }).waitFor({ state: 'visible' });
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).navigator.clipboard.readText())).toBe(key);
    await shot('keys-created');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await page.waitForLoadState('load');
    const row = page.locator('#keys-table tr', { hasText: 'browser-app' });
    await poll(() => text(row.locator('.badge'))).toBe('Active');
    expect(await page.content()).not.toContain(key); // shown once: gone after the reload
  });

  it('shows the key\'s requests live, in flight and finished', async () => {
    await open('/dashboard/live');
    await poll(() => attr(page.locator('#live-conn'), 'data-state')).toBe('open');
    const client = sdk(key);
    const done = await client.chat.completions.create({ model: 'openai/gpt-5.4', messages: [{ role: 'user', content: 'hello' }] });
    expect(done.choices[0]!.message.content).toContain('mock');
    const row = page.locator('#live-table tbody tr', { hasText: 'gpt-5.4' }).first();
    await poll(() => text(row)).toContain('browser-app');
    await poll(() => text(row.locator('.badge'))).toBe('200');
    await poll(() => text(row)).toContain('12 / 5');
    const slow = client.chat.completions.create({ model: 'openai/slow-stream', messages: [{ role: 'user', content: 'take your time' }], stream: true, stream_options: { include_usage: true } });
    const inflight = page.locator('#live-table tbody tr', { hasText: 'slow-stream' });
    await poll(() => text(inflight.locator('.badge'))).toMatch(/waiting|streaming/);
    await poll(() => text(page.locator('#live-inflight'))).toBe('1');
    await page.waitForTimeout(900);
    await shot('live-in-flight');
    let streamed = '';
    for await (const c of await slow) streamed += c.choices[0]?.delta.content ?? '';
    expect(streamed).toBe('Thinking slowly… done.');
    await poll(() => text(inflight.locator('.badge'))).toBe('200');
    // Finished, the row names the model that served it and, beneath, the one asked for.
    await poll(() => text(inflight)).toMatch(/slow-stream-2026-11-01\s+asked slow-stream/);
    await poll(() => text(page.locator('#live-inflight'))).toBe('0');
    for (let i = 0; i < 4; i++) await client.chat.completions.create({ model: 'openai/gpt-5.4', messages: [{ role: 'user', content: `again ${i}` }] });
    // Refused before reaching a provider (a provider key sent as the proxy key): the monitor shows
    // it, the per-provider usage history does not.
    await sdk(gw.mocks.openai.key).chat.completions.create({ model: 'gpt-5.4', messages: [] }).catch(() => undefined);
    await poll(() => page.locator('#live-table tbody tr').count()).toBe(6);
    await shot('live');
  });

  it('shows the requests in the Usage chart and tables', async () => {
    await open('/dashboard/usage?range=24h');
    const chart = page.locator('#chart-requests');
    await poll(() => attr(chart, 'data-total')).toBe('6');
    expect(await chart.locator('rect.bar').count()).toBeGreaterThan(0);
    await poll(() => text(page.locator('[data-stat="requests"]'))).toBe('6');
    await poll(() => page.locator('#by-key tr[data-group]').count()).toBe(1);
    await poll(() => attr(page.locator('#by-model tr[data-group="openai/gpt-5.4"]'), 'data-requests')).toBe('5');
    await poll(() => page.locator('#requests-table tbody tr').count()).toBe(6);
    await page.locator('#latency tr[data-provider="openai"]').waitFor({ state: 'visible' });
    await shot('usage');
    await page.locator('select[name="model"]').selectOption('slow-stream-2026-11-01');
    await page.waitForURL(/model=slow-stream-2026-11-01/);
    await poll(() => page.locator('#requests-table tbody tr').count()).toBe(1);
    await open('/dashboard/usage?range=30d');
    await poll(() => attr(page.locator('#chart-requests'), 'data-total')).toBe('6');
    await shot('usage-30d');
  });

  it('tests a provider key from the Providers page', async () => {
    await open('/dashboard/providers');
    const card = page.locator('[data-provider="openai"]');
    await poll(() => text(card.locator('.badge'))).toBe('Configured');
    await card.getByRole('button', { name: 'Test key' }).click();
    await poll(() => text(card.locator('.test-result'))).toMatch(/✓ The key works: 1 models available/);
    await page.locator('[data-provider="anthropic"]').getByRole('button', { name: 'Test key' }).click();
    await poll(() => attr(page.locator('[data-provider="anthropic"] .test-result'), 'class')).toMatch(/ok/);
    await shot('providers');
  });

  it('revokes the key after a confirmation; the next call fails with 401', async () => {
    await open('/dashboard/keys');
    const row = page.locator('#keys-table tr', { hasText: 'browser-app' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.locator('#revoke-key');
    await dialog.waitFor({ state: 'visible' });
    await poll(() => text(dialog)).toContain('Revoke “browser-app”?');
    await shot('keys-revoke-dialog');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.waitForLoadState('load');
    await poll(() => text(page.locator('#keys-table tr', { hasText: 'browser-app' }).locator('.badge'))).toBe('Revoked');
    await shot('keys');
    await expect(sdk(key).chat.completions.create({ model: 'openai/gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }))
      .rejects.toMatchObject({ status: 401, code: 'key_revoked' });
  });

  it('loads every page (load times printed; measured by npm run bench)', async () => {
    for (const p of ['/dashboard/usage', '/dashboard/usage?range=1y', '/dashboard/live', '/dashboard/keys', '/dashboard/providers']) await open(p);
    expect(Object.keys(loadTimes)).toEqual(expect.arrayContaining(['/dashboard/usage', '/dashboard/live', '/dashboard/keys', '/dashboard/providers']));
    console.log(`dashboard page load times (ms): ${JSON.stringify(loadTimes)}`);
  });

  it('signs out', async () => {
    await open('/dashboard/usage');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${gw.url}/dashboard/signed-out`);
    await poll(() => text(page.locator('h1'))).toBe('You are signed out');
    await shot('signed-out');
    const res = await page.goto(`${gw.url}/dashboard/keys`);
    expect(res!.status()).toBe(401);
  });
});
