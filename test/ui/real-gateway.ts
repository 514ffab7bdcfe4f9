// A real `gateway start` (background daemon, the built CLI) in a temp GATEWAY_HOME, pointed at mock
// providers on loopback through GATEWAY_*_BASE_URL and GATEWAY_*_API_KEY, for tests that run the
// programs the way a user does.
import { randomBytes } from 'node:crypto';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';

export interface RealGateway {
  home: string;
  /** What a CLI run needs besides GATEWAY_HOME (the helper strips the caller's GATEWAY_* vars). */
  env: Record<string, string>;
  url: string;
  pid: number;
  mocks: { anthropic: MockProvider; openai: MockProvider; gemini: MockProvider };
  cli(args: string[], opts?: { input?: string; env?: Record<string, string | undefined>; timeoutMs?: number }): Promise<CliResult>;
  /** A proxy key for SDK clients. */
  sdkKey: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function start(cli: RealGateway['cli']): Promise<{ url: string; pid: number }> {
  const r = await cli(['start']);
  const m = /gateway running at (\S+) \(pid (\d+)\)/.exec(r.stdout);
  if (r.code !== 0 || !m) throw new Error(`gateway start failed (${r.code}): ${r.stdout}${r.stderr}`);
  return { url: m[1]!, pid: Number(m[2]) };
}

export async function startRealGateway(): Promise<RealGateway> {
  const home = makeTempHome('gateway-ui-');
  const [anthropic, openai, gemini] = await Promise.all([startMockProvider('anthropic'), startMockProvider('openai'), startMockProvider('gemini')]);
  const env: Record<string, string> = {
    GATEWAY_PORT: '0',
    GATEWAY_KEYCHAIN_SERVICE: `model-gateway-test-${process.pid}-${randomBytes(3).toString('hex')}`,
    GATEWAY_ANTHROPIC_BASE_URL: anthropic.origin, GATEWAY_OPENAI_BASE_URL: openai.origin, GATEWAY_GEMINI_BASE_URL: gemini.origin,
    GATEWAY_ANTHROPIC_API_KEY: anthropic.key, GATEWAY_OPENAI_API_KEY: openai.key, GATEWAY_GEMINI_API_KEY: gemini.key,
  };
  const cli: RealGateway['cli'] = (args, opts = {}) => runCli(args, { home: home.dir, input: opts.input, timeoutMs: opts.timeoutMs, env: { ...env, ...opts.env } });
  let running = await start(cli);
  const created = await cli(['keys', 'create', '--name', 'sdk', '--json']);
  const sdkKey = (JSON.parse(created.stdout) as { key: string }).key;
  const gw: RealGateway = {
    home: home.dir, env, url: running.url, pid: running.pid, mocks: { anthropic, openai, gemini }, cli, sdkKey,
    async restart() {
      await cli(['stop']);
      running = await start(cli);
      gw.url = running.url;
      gw.pid = running.pid;
    },
    async stop() {
      await cli(['stop']).catch(() => undefined);
      await Promise.all([anthropic.close(), openai.close(), gemini.close()]);
      home.cleanup();
    },
  };
  return gw;
}
