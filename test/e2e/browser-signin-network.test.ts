// The dashboard reached over the network in a real browser (Debian's chromium through
// playwright-core): a daemon serving TLS on 0.0.0.0 (a self-signed certificate made here with
// openssl), opened at this machine's LAN address so the daemon sees a peer that is not loopback.
// The sign-in page takes an admin key; a proxy key or the local admin token is refused there;
// signing out ends the session.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempHome, REPO_ROOT, runCli } from '../helpers/cli.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { lanAddress, selfSignedCert } from '../helpers/tls.js';

const CHROMIUM = process.env.GATEWAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');
const home = makeTempHome('gateway-signin-');
let mock: MockProvider;
let env: Record<string, string>;
let browser: Browser;
let page: Page;
let origin = '';
let adminKey = '';
const cli = (args: string[]) => runCli(args, { home: home.dir, env });

const text = (l: Locator) => l.first().innerText({ timeout: 500 }).then((t) => t.trim(), () => '');
const poll = <T>(fn: () => Promise<T>) => expect.poll(fn, { timeout: 8000, interval: 50 });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  const lan = lanAddress('to reach the dashboard over the network');
  mkdirSync(ARTIFACTS, { recursive: true });
  mock = await startMockProvider('openai');
  env = {
    GATEWAY_OPENAI_BASE_URL: mock.origin, GATEWAY_OPENAI_API_KEY: mock.key,
    GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home.dir, 'no-bus-here')}`,
  };
  const { cert, key } = selfSignedCert(home.dir, `IP:${lan}`);
  const started = await cli(['start', '--host', '0.0.0.0', '--port', '0', '--tls-cert', cert, '--tls-key', key]);
  const m = /gateway running at https:\/\/0\.0\.0\.0:(\d+)/.exec(started.stdout);
  if (!m) throw new Error(`gateway did not start: ${started.stdout}${started.stderr}`);
  origin = `https://${lan}:${m[1]}`;
  adminKey = (await cli(['keys', 'create', '--admin', '--name', 'ops'])).stdout.trim();
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  // The certificate is self-signed: the browser is told to accept it, as a user would click through.
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1360, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(8000);
  page.on('pageerror', (e) => { throw e; });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await cli(['stop']).catch(() => undefined);
  await mock?.close();
  home.cleanup();
});

async function signIn(key: string): Promise<void> {
  await page.goto(`${origin}/dashboard/keys`);
  await page.locator('input[name="key"]').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForLoadState('load');
}

describe('the dashboard over the network', () => {
  it('shows the sign-in form, and refuses a proxy key and the local admin token there', async () => {
    await page.goto(`${origin}/dashboard/usage`);
    await poll(() => text(page.locator('h1'))).toBe('Sign in to the dashboard');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-signin-network.png'), fullPage: true });
    const proxyKey = (await cli(['keys', 'create', '--name', 'app'])).stdout.trim();
    await signIn(proxyKey);
    await poll(() => text(page.locator('[data-signin-error]'))).toMatch(/a proxy key is not an admin key/);
    await signIn(readFileSync(join(home.dir, 'admin-token'), 'utf8').trim());
    await poll(() => text(page.locator('[data-signin-error]'))).toMatch(/local admin token is accepted only on the gateway's own machine/);
    expect((await page.context().cookies()).length).toBe(0);
  });

  it('signs in with an admin key, with a Secure session cookie, and shows the keys', async () => {
    await signIn(adminKey);
    await page.waitForURL(`${origin}/dashboard/usage`);
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict' });
    await page.goto(`${origin}/dashboard/keys`);
    await poll(() => text(page.locator('tr[data-key-id] [data-admin-key]'))).toBe('admin');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-keys-network.png'), fullPage: true });
  });

  it('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${origin}/dashboard/signed-out`);
    await poll(() => text(page.locator('h1'))).toBe('You are signed out');
    await page.goto(`${origin}/dashboard/keys`);
    await poll(() => text(page.locator('h1'))).toBe('Sign in to the dashboard');
  });
});
