// The dashboard's Providers page and /admin/providers with providers the user added: listed beside
// the built-ins with protocol, base URL (path included) and profile; a key stored from the page
// goes to the keychain under the provider's name and the test uses it; a local server needs none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configuredProviders } from '../../src/providers/configured.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { startDashboardGateway, type DashboardGateway } from './harness.js';

let gw: DashboardGateway;
let box: MockProvider;
let local: MockProvider;
let auth: Record<string, string>;

beforeAll(async () => {
  [box, local] = await Promise.all([startMockProvider('openai', { mount: '/api', key: 'sk-box-dash-0123456789' }), startMockProvider('openai', { requireKey: false })]);
  const { providers } = configuredProviders({
    box: { protocol: 'openai-chat', baseUrl: `${box.origin}/api/v1`, quirks: 'groq' },
    local: { protocol: 'openai-chat', baseUrl: `${local.origin}/v1`, noKey: true },
  });
  gw = await startDashboardGateway({ providers });
  auth = { authorization: `Bearer ${gw.daemon.adminToken}` };
});
afterAll(async () => { await gw?.close(); await box?.close(); await local?.close(); });

describe('added providers on /admin/providers and the Providers page', () => {
  it('are listed after the built-ins, with protocol, base URL and profile', async () => {
    const r = await gw.raw('GET', '/admin/providers', { headers: auth });
    expect(r.status).toBe(200);
    const rows = r.json.providers as Array<Record<string, unknown>>;
    expect(rows.map((p) => p.provider)).toEqual(['anthropic', 'openai', 'gemini', 'box', 'local']);
    expect(rows[3]).toMatchObject({ source: 'configured', protocol: 'openai-chat', baseUrl: `${box.origin}/api/v1`, quirks: 'groq', configured: false, keyless: false, envVar: 'GATEWAY_BOX_API_KEY' });
    expect(rows[4]).toMatchObject({ keyless: true, configured: true, origin: null });
  });

  it('a key set from the page is stored under the provider\'s name and the test uses it at its base path', async () => {
    const put = await gw.raw('PUT', '/admin/providers/box/key', { headers: auth, body: { key: box.key } });
    expect(put.status).toBe(200);
    expect(gw.keychain.entries.get('box')).toBe(box.key);
    const t = await gw.raw('POST', '/admin/providers/box/test', { headers: auth });
    expect(t.json).toMatchObject({ ok: true, models: 1 });
    expect(box.requests.at(-1)!.url).toBe('/api/v1/models');
    expect(box.requests.at(-1)!.headers.authorization).toBe(`Bearer ${box.key}`);
    const l = await gw.raw('POST', '/admin/providers/local/test', { headers: auth });
    expect(l.json).toMatchObject({ ok: true, message: 'it answers: 1 models available' });
    expect(local.requests.at(-1)!.headers.authorization).toBeUndefined();
  });

  it('the page shows them, a local server as needing no key', async () => {
    const page = await gw.raw('GET', '/dashboard/providers', { headers: { cookie: (await gw.login()).cookie } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-provider="box"');
    expect(page.text).toMatch(/data-provider="local"[\s\S]*No key needed[\s\S]*none: a local server, sent no credential/);
    expect(page.text).not.toContain('data-set-key="local"');
  });
});
