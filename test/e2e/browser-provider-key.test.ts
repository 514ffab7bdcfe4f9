// A provider key pasted into the dashboard's Providers page, in a real browser (Debian's chromium
// through playwright-core), against a real daemon process whose keychain is the real Secret
// Service (gnome-keyring on the private D-Bus session scripts/test.sh starts; a unique service
// name per run, so no user's entries are touched). The key lands in that keychain, read back both
// through the keychain module and `gateway providers list`; it is in no file of the state
// directory and never shown again; and the daemon then sends it upstream.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKeychain, type Keychain } from '../../src/daemon/store/keychain.js';
import { MOCK_TEXT } from '../helpers/mock-provider.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

const CHROMIUM = process.env.GATEWAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SERVICE = `model-gateway-test-${process.pid}-${randomBytes(3).toString('hex')}`;

let gw: GatewayProcess;
let browser: Browser;
let page: Page;
let keychain: Keychain;
let proxyKey = '';
let key = ''; // the provider key pasted into the page: the Anthropic mock's

const text = (l: Locator) => l.first().innerText({ timeout: 500 }).then((t) => t.trim(), () => '');
const poll = <T>(fn: () => Promise<T>) => expect.poll(fn, { timeout: 8000, interval: 50 });

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

type ProviderList = { keychain: { available: boolean; name: string }; providers: Array<{ provider: string; configured: boolean; origin: string | null; last4: string | null }> };
const providersList = async (): Promise<ProviderList> => JSON.parse((await gw.cli(['providers', 'list', '--json'])).stdout) as ProviderList;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  const bus = process.env.DBUS_SESSION_BUS_ADDRESS;
  if (!bus) throw new Error('no D-Bus session: run this through scripts/test.sh (a private session with gnome-keyring)');
  // The real Secret Service on the test session's bus, and no Anthropic key in the environment:
  // the only key the daemon can use is the one stored from the page.
  const env = { GATEWAY_KEYCHAIN_SERVICE: SERVICE, GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: bus };
  gw = await startGatewayProcess({ ...env, GATEWAY_ANTHROPIC_API_KEY: '' });
  keychain = openKeychain({ env: { ...process.env, ...env } });
  key = gw.mocks.anthropic.key;
  proxyKey = (await gw.cli(['keys', 'create', '--name', 'kc'])).stdout.trim();
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(8000);
  page.on('pageerror', (e) => { throw e; });
  const link = (await gw.cli(['dashboard', '--no-open'])).stdout.trim();
  await page.goto(link);
  await page.waitForURL(`${gw.url}/dashboard/usage`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await keychain?.delete('anthropic').catch(() => false);
  await gw?.close();
});

const claude = () => new Anthropic({ baseURL: gw.url, apiKey: proxyKey, maxRetries: 0 });

describe('a provider key stored from the dashboard', () => {
  it('before: the keychain answers, holds no Anthropic key, and the daemon has none to send', async () => {
    const list = await providersList();
    expect(list.keychain).toMatchObject({ available: true, name: 'Secret Service (Linux, D-Bus)' });
    expect(list.providers.find((p) => p.provider === 'anthropic')).toMatchObject({ configured: false });
    expect(await keychain.get('anthropic')).toBeUndefined();
    const before = gw.mocks.anthropic.requests.length;
    await expect(claude().messages.create({ model: 'claude-opus-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 503, message: expect.stringMatching(/no Anthropic API key is configured/) });
    expect(gw.mocks.anthropic.requests.length).toBe(before);
  });

  it('is pasted once into the Providers page, which then shows it as stored in the keychain, never the key', async () => {
    await page.goto(`${gw.url}/dashboard/providers`);
    const card = page.locator('[data-provider="anthropic"]');
    await poll(() => text(card.locator('.badge'))).toBe('Not configured');
    await card.getByRole('button', { name: 'Set key…' }).click();
    const dialog = page.locator('#set-key');
    await dialog.waitFor({ state: 'visible' });
    await dialog.locator('input[name="key"]').fill(key);
    await dialog.getByRole('button', { name: 'Store in keychain' }).click();
    await poll(() => text(page.locator('[data-provider="anthropic"] .badge'))).toBe('Configured'); // after the page reloads itself
    const stored = page.locator('[data-provider="anthropic"]');
    await poll(() => text(stored.locator('.facts'))).toContain(`…${key.slice(-4)}`);
    expect(await text(stored.locator('.facts'))).toContain('Secret Service (Linux, D-Bus)');
    expect(await page.content()).not.toContain(key);
  });

  it('is in the real keychain, under the provider\'s name, read back by the keychain module and the CLI', async () => {
    expect(await keychain.get('anthropic')).toBe(key);
    expect((await providersList()).providers.find((p) => p.provider === 'anthropic')).toMatchObject({ configured: true, origin: 'keychain', last4: key.slice(-4) });
  });

  it('is in no file of the state directory', () => {
    expect(existsSync(join(gw.dir, 'insecure-secrets.json'))).toBe(false);
    for (const f of filesUnder(gw.dir)) expect(readFileSync(f).includes(key), f).toBe(false);
  });

  it('is what the daemon sends upstream from then on', async () => {
    const msg = await claude().messages.create({ model: 'claude-opus-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
    const up = gw.mocks.anthropic.requests.at(-1)!;
    expect(up.headers['x-api-key']).toBe(key);
    expect(JSON.stringify(up.headers) + up.body.toString('utf8')).not.toContain(proxyKey);
    // And the page's own test of the key goes through with it.
    await page.locator('[data-provider="anthropic"]').getByRole('button', { name: 'Test key' }).click();
    await poll(() => text(page.locator('[data-provider="anthropic"] .test-result'))).toMatch(/^✓ The key works/);
    expect(gw.mocks.anthropic.requests.at(-1)!.headers['x-api-key']).toBe(key);
  });
});
