// Starts a real daemon on an ephemeral loopback port against three mock providers, with a temp
// state directory and one proxy key. Everything is real HTTP; nothing of ours is mocked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type DaemonOptions, type RunningDaemon } from '../../src/daemon/server.js';
import { KeyStore } from '../../src/daemon/store/keys.js';
import { staticSecrets } from '../../src/daemon/store/secrets.js';
import { startMockProvider, type MockProvider } from './mock-provider.js';

export interface TestGateway {
  daemon: RunningDaemon;
  url: string;
  dir: string;
  key: string;
  keys: KeyStore;
  mocks: { anthropic: MockProvider; openai: MockProvider; gemini: MockProvider };
  close(): Promise<void>;
}

/** `addedKeys`: keys of providers config.json adds, beside the built-in mocks' own. */
export async function startTestGateway(opts: Partial<DaemonOptions> & { providerKeys?: Partial<Record<'anthropic' | 'openai' | 'gemini', string | readonly string[]>>; addedKeys?: Record<string, string> } = {}): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-test-'));
  const [anthropic, openai, gemini] = await Promise.all([startMockProvider('anthropic'), startMockProvider('openai'), startMockProvider('gemini')]);
  const keys = new KeyStore(dir);
  const { key } = keys.create({ name: 'test' });
  const daemon = await startDaemon({
    port: 0,
    stateDir: dir,
    secrets: staticSecrets({ ...(opts.providerKeys ?? { anthropic: anthropic.key, openai: openai.key, gemini: gemini.key }), ...opts.addedKeys }),
    ...opts,
    // An added provider can be pointed at a mock while its descriptor keeps its real base URL.
    origins: { anthropic: anthropic.origin, openai: openai.origin, gemini: gemini.origin, ...opts.origins },
  });
  return {
    daemon, url: daemon.url, dir, key, keys, mocks: { anthropic, openai, gemini },
    async close() {
      await daemon.close(1000);
      await Promise.all([anthropic.close(), openai.close(), gemini.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
