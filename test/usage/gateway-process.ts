// A real gateway daemon process (`gateway start`, built dist/) in a temp state directory, against
// the three mock providers running in the test process; the CLI runs as a user would run it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';

export interface GatewayProcess {
  dir: string;
  /** The running daemon's address and pid (a `restart()` changes both). */
  url: string;
  pid: number;
  mocks: { anthropic: MockProvider; openai: MockProvider; gemini: MockProvider };
  cli(args: string[], env?: Record<string, string | undefined>): Promise<CliResult>;
  adminToken(): string;
  alive(): boolean;
  /** `gateway start --port 0` again in the same state directory (after a kill). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startGatewayProcess(extraEnv: Record<string, string> = {}, config?: unknown): Promise<GatewayProcess> {
  const home = makeTempHome('gateway-usage-');
  if (config !== undefined) writeFileSync(join(home.dir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
  const [anthropic, openai, gemini] = await Promise.all([startMockProvider('anthropic'), startMockProvider('openai'), startMockProvider('gemini')]);
  const env: Record<string, string> = {
    GATEWAY_ANTHROPIC_BASE_URL: anthropic.origin, GATEWAY_OPENAI_BASE_URL: openai.origin, GATEWAY_GEMINI_BASE_URL: gemini.origin,
    GATEWAY_ANTHROPIC_API_KEY: anthropic.key, GATEWAY_OPENAI_API_KEY: openai.key, GATEWAY_GEMINI_API_KEY: gemini.key,
    // Never the user's keychain: a bus that does not exist.
    GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home.dir, 'no-bus-here')}`,
    ...extraEnv,
  };
  const cli = (args: string[], extra: Record<string, string | undefined> = {}) => runCli(args, { home: home.dir, env: { ...env, ...extra }, timeoutMs: 30_000 });
  const start = async (): Promise<{ url: string; pid: number }> => {
    const started = await cli(['start', '--port', '0']);
    const m = /gateway running at (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)/.exec(started.stdout);
    if (!m) throw new Error(`gateway did not start: ${started.stdout}${started.stderr}`);
    return { url: m[1]!, pid: Number(m[2]) };
  };
  const gw: GatewayProcess = {
    dir: home.dir, ...(await start()), mocks: { anthropic, openai, gemini }, cli,
    alive: () => { try { process.kill(gw.pid, 0); return true; } catch { return false; } },
    adminToken: () => readFileSync(join(home.dir, 'admin-token'), 'utf8').trim(),
    async restart() { Object.assign(gw, await start()); },
    async close() {
      await cli(['stop']).catch(() => undefined);
      if (gw.alive()) process.kill(gw.pid, 'SIGKILL');
      await Promise.all([anthropic.close(), openai.close(), gemini.close()]);
      home.cleanup();
    },
  };
  return gw;
}

/** Signs in through `gateway dashboard --no-open`: the session cookie header. */
export async function dashboardSession(gw: GatewayProcess): Promise<string> {
  const r = await gw.cli(['dashboard', '--no-open']);
  const link = r.stdout.trim();
  if (!link.startsWith(`${gw.url}/dashboard/login?token=`)) throw new Error(`unexpected dashboard output: ${r.stdout}${r.stderr}`);
  const res = await fetch(link, { redirect: 'manual' });
  await res.text();
  const cookie = res.headers.getSetCookie()[0]?.split(';', 1)[0];
  if (!cookie) throw new Error('no session cookie');
  return cookie;
}
