// Several real gateway daemons (`gateway start --store …`, built dist/) on one PostgreSQL store,
// each with a state directory of its own, against one mock OpenAI in the test process.
// The keys are made in the shared store before any daemon starts, as the CLI would make them there.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PgKeyRecords } from '../../src/daemon/store/pg-keys.js';
import { SharedStore } from '../../src/daemon/store/shared-store.js';
import { parseStoreUrl } from '../../src/daemon/store/store-url.js';
import type { KeyLimits } from '../../src/daemon/limits/limits.js';
import type { StoreStatusView } from '../../src/daemon/store/store-health.js';
import { makeTempHome, runCli, type CliResult } from './cli.js';
import { startMockProvider, type MockProvider } from './mock-provider.js';
export { until } from './wait.js';

export interface TeamDaemon {
  dir: string;
  url: string;
  cli(args: string[]): Promise<CliResult>;
  /** GET /admin/status's `store`, with the daemon's admin token. */
  store(): Promise<StoreStatusView>;
}

export interface Team {
  daemons: TeamDaemon[];
  openai: MockProvider;
  close(): Promise<void>;
}

/** `keys`: name → limits, created once and given to every daemon; returns each key's secret and id in `keys`. */
export async function startTeam(opts: { url: string; count: number; keys: Record<string, KeyLimits>; config?: unknown }): Promise<Team & { keys: Record<string, { key: string; id: string }> }> {
  const openai = await startMockProvider('openai');
  const homes = Array.from({ length: opts.count }, () => makeTempHome('gateway-team-'));
  const shared = await SharedStore.open({ store: parseStoreUrl(opts.url), daemonId: 'test-setup', log: () => {}, poolSize: 1 });
  const keys: Record<string, { key: string; id: string }> = {};
  try {
    const store = new PgKeyRecords(shared);
    for (const [name, limits] of Object.entries(opts.keys)) {
      const { key, record } = await store.create({ name, limits });
      keys[name] = { key, id: record.id };
    }
  } finally {
    await shared.close();
  }
  const daemons: TeamDaemon[] = [];
  const close = async () => {
    await Promise.all(daemons.map((d) => d.cli(['stop']).catch(() => undefined)));
    await openai.close();
    for (const h of homes) h.cleanup();
  };
  try {
    for (const home of homes) {
      if (opts.config !== undefined) writeFileSync(join(home.dir, 'config.json'), JSON.stringify(opts.config), { mode: 0o600 });
      const env = {
        GATEWAY_OPENAI_BASE_URL: openai.origin, GATEWAY_OPENAI_API_KEY: openai.key,
        // Never the user's keychain: a bus that does not exist.
        GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home.dir, 'no-bus-here')}`,
      };
      const cli = (args: string[]) => runCli(args, { home: home.dir, env, timeoutMs: 30_000 });
      const started = await cli(['start', '--port', '0', '--store', opts.url]);
      const url = /gateway running at (http:\/\/127\.0\.0\.1:\d+)/.exec(started.stdout)?.[1];
      if (!url) throw new Error(`a daemon did not start: ${started.stdout}${started.stderr}`);
      daemons.push({
        dir: home.dir, url, cli,
        async store() {
          const token = readFileSync(join(home.dir, 'admin-token'), 'utf8').trim();
          const res = await fetch(`${url}/admin/status`, { headers: { authorization: `Bearer ${token}` } });
          return ((await res.json()) as { store: StoreStatusView }).store;
        },
      });
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { daemons, openai, keys, close };
}

