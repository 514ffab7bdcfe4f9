// A real daemon on loopback with the usage recorder and the dashboard mounted, against the mock
// providers, plus a raw HTTP client that can send any Host, Origin or Cookie header.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDashboard, type Dashboard } from '../../src/daemon/dashboard/mount.js';
import { startDaemon, type RunningDaemon } from '../../src/daemon/server.js';
import { KEYCHAIN_BACKENDS, KeychainError, type Keychain } from '../../src/daemon/store/keychain.js';
import { KeyStore } from '../../src/daemon/store/keys.js';
import { createSecretSource } from '../../src/daemon/store/secret-source.js';
import { openUsageHistory, recordUsage, storeBodies, type UsageRecorder } from '../../src/daemon/observe/usage/index.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { readResponse } from '../helpers/http-response.js';
import type { ProviderDescriptor } from '../../src/providers/registry.js';

export function memoryKeychain(available = true): Keychain & { entries: Map<string, string> } {
  const entries = new Map<string, string>();
  const check = () => { if (!available) throw new KeychainError('unavailable', 'no keychain in this test'); };
  return {
    service: 'model-gateway-test', entries,
    backend: async () => { check(); return KEYCHAIN_BACKENDS['secret-service']; },
    get: async (a) => { check(); return entries.get(a); },
    set: async (a, s) => { check(); entries.set(a, s); },
    delete: async (a) => { check(); return entries.delete(a); },
  };
}

export interface Reply { status: number; headers: IncomingHttpHeaders; text: string; json: any }

export interface DashboardGateway {
  daemon: RunningDaemon;
  dashboard: Dashboard;
  recorder: UsageRecorder;
  keychain: ReturnType<typeof memoryKeychain>;
  mocks: { anthropic: MockProvider; openai: MockProvider; gemini: MockProvider };
  dir: string;
  port: number;
  url: string;
  /** A proxy key named "test". */
  key: string;
  host: string;
  raw(method: string, path: string, opts?: { headers?: Record<string, string>; body?: unknown }): Promise<Reply>;
  /** Signs in through a one-time link: the session cookie header and its CSRF token. */
  login(): Promise<{ cookie: string; csrf: string }>;
  close(): Promise<void>;
}

export async function startDashboardGateway(opts: { env?: Record<string, string>; keychainAvailable?: boolean; usageConfig?: unknown; providers?: ProviderDescriptor[] } = {}): Promise<DashboardGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-dash-'));
  const [anthropic, openai, gemini] = await Promise.all([startMockProvider('anthropic'), startMockProvider('openai'), startMockProvider('gemini')]);
  const keychain = memoryKeychain(opts.keychainAvailable ?? true);
  const env = opts.env ?? { GATEWAY_OPENAI_API_KEY: openai.key, GATEWAY_GEMINI_API_KEY: gemini.key };
  const secrets = createSecretSource({ dir, env, keychain });
  const { key } = new KeyStore(dir).create({ name: 'test' });
  const history = await openUsageHistory({ dir, config: opts.usageConfig, log: () => {} });
  let daemon: RunningDaemon | undefined;
  let recorder: UsageRecorder | undefined;
  const dashboard = createDashboard({ dir, daemon: () => daemon!, recorder: () => recorder, secrets });
  daemon = await startDaemon({
    port: 0, stateDir: dir, secrets, mounts: [dashboard.mount],
    origins: { anthropic: anthropic.origin, openai: openai.origin, gemini: gemini.origin },
    // Budgets are charged by the usage history's price list, as `gateway start` sets it up.
    settings: { prices: history.prices, ...(opts.providers ? { providers: opts.providers } : {}) },
  });
  recorder = recordUsage(history, daemon.ctx.bus, () => {});
  storeBodies(history, recorder, daemon.ctx, () => {}); // only with usageConfig { logBodies: true }
  const port = daemon.port;
  const host = `127.0.0.1:${port}`;

  const raw: DashboardGateway['raw'] = (method, path, o = {}) => new Promise((resolve, reject) => {
    const body = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    const headers: Record<string, string> = { host, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers };
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, setHost: false }, (res) => readResponse(res, resolve));
    req.on('error', reject);
    req.end(body);
  });

  return {
    daemon, dashboard, recorder, keychain, mocks: { anthropic, openai, gemini }, dir, port, url: daemon.url, key, host, raw,
    async login() {
      const link = new URL(dashboard.loginUrl().url);
      const res = await raw('GET', `${link.pathname}${link.search}`);
      const setCookie = String(res.headers['set-cookie']?.[0] ?? '');
      const cookie = setCookie.split(';', 1)[0]!;
      const page = await raw('GET', '/dashboard/keys', { headers: { cookie } });
      const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page.text)?.[1] ?? '';
      return { cookie, csrf };
    },
    async close() {
      await daemon!.close(1000);
      await recorder!.close();
      await Promise.all([anthropic.close(), openai.close(), gemini.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
