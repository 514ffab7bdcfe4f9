// The Keys page with limits in a real browser (Debian's chromium through playwright-core) against a
// real daemon process: create a key with a budget and rate limits from the form (a value the API
// refuses is shown on its field), spend some of the budget from the openai SDK, and see the spend
// against the budget, when it resets, and the period's chart. Screenshots go to test-artifacts/.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

const CHROMIUM = process.env.GATEWAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');

let gw: GatewayProcess;
let browser: Browser;
let page: Page;
let key = '';

const text = (l: Locator) => l.first().innerText({ timeout: 500 }).then((t) => t.trim(), () => '');
const attr = (l: Locator, name: string) => l.first().getAttribute(name, { timeout: 500 }).catch(() => null);
const poll = <T>(fn: () => Promise<T>) => expect.poll(fn, { timeout: 8000, interval: 50 });
const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  gw = await startGatewayProcess();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
  const context = await browser.newContext({ viewport: { width: 1500, height: 900 }, deviceScaleFactor: 1 });
  page = await context.newPage();
  page.setDefaultTimeout(8000);
  page.on('pageerror', (e) => { throw e; });
  await page.goto((await gw.cli(['dashboard', '--no-open'])).stdout.trim());
  await page.waitForURL(`${gw.url}/dashboard/usage`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe('the Keys page with limits', () => {
  it('creates a key with limits from the form, showing a refused value on its field', async () => {
    await page.goto(`${gw.url}/dashboard/keys`);
    await page.getByRole('button', { name: 'Create key' }).first().click();
    const dialog = page.locator('#create-key');
    await dialog.waitFor({ state: 'visible' });
    await dialog.locator('input[name="name"]').fill('capped');
    await dialog.locator('input[name="budget"]').fill('5/fortnight');
    await dialog.locator('input[name="rpm"]').fill('60');
    await dialog.locator('input[name="concurrency"]').fill('4');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await poll(() => text(dialog.locator('.form-error'))).toMatch(/budget must be an amount in USD with an optional period/);
    expect(await attr(dialog.locator('input[name="budget"]'), 'aria-invalid')).toBe('true');
    await shot('keys-limits-refused');
    await dialog.locator('input[name="budget"]').fill('1/day');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const shown = dialog.locator('#new-key');
    await poll(() => shown.inputValue()).toMatch(/^sk-proxy-/);
    key = await shown.inputValue();
    await dialog.getByRole('button', { name: 'Done' }).click();
    await page.waitForLoadState('load');
    const row = page.locator('#keys-table tr', { hasText: 'capped' });
    await poll(() => attr(row.locator('[data-limits]'), 'data-limits')).toBe('$1.00/day · 60 rpm · 4 at once');
    await poll(() => text(row.locator('.limits-col'))).toMatch(/\$0\.00 of \$1\.00 today\s+resets \w{3} \d{1,2} 00:00 UTC\s+0 of 60 rpm · 0 of 4 at once/);
    // A key without limits says so.
    const list = await gw.cli(['keys', 'create', '--name', 'free']);
    expect(list.code).toBe(0);
    await page.reload();
    await poll(() => text(page.locator('#keys-table tr', { hasText: 'free' }).locator('.limits-col'))).toBe('None');
  });

  it('shows the spend against the budget and the period\'s chart, in the numbers the daemon counts', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    for (let i = 0; i < 4; i++) await client.chat.completions.create({ model: 'openai/gpt-4o', max_tokens: 100, messages: [{ role: 'user', content: `hi ${i}` }] });
    const keys = (await (await fetch(`${gw.url}/admin/keys`, { headers: { authorization: `Bearer ${gw.adminToken()}` } })).json()) as { keys: Array<{ id: string; name: string; standing: { budget: { spent: number } } }> };
    const capped = keys.keys.find((k) => k.name === 'capped')!;
    const spent = capped.standing.budget.spent;
    expect(spent).toBeGreaterThan(0);
    await page.goto(`${gw.url}/dashboard/keys`);
    const row = page.locator('#keys-table tr', { hasText: 'capped' });
    expect(Number(await attr(row.locator('[data-budget-spent]'), 'data-budget-spent'))).toBeCloseTo(spent, 10);
    await poll(() => text(row.locator('.limits-col'))).toMatch(/\$0\.\d+ of \$1\.00 today[\s\S]*4 of 60 rpm · 0 of 4 at once/);
    const card = page.locator(`[data-budget-key="${capped.id}"]`);
    await poll(() => text(card.locator('h2'))).toMatch(/^capped\s+\$1\.00\/day · spend per hour today$/);
    await poll(() => text(card.locator('.budget-standing'))).toMatch(/^\$0\.\d+ of \$1\.00 today, \$[\d.]+ left, resets \w{3} \d{1,2} 00:00 UTC$/);
    const chart = card.locator(`#spend-${capped.id}`);
    expect(Number(await attr(chart, 'data-total'))).toBeCloseTo(spent, 8);
    expect(await chart.locator('rect.bar').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('[data-budget-key]').count()).toBe(1); // only keys with a budget
    await shot('keys-limits');
  });
});
