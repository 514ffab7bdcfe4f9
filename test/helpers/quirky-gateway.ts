// A real daemon with one user-added provider, configured from its preset (presets.ts, as
// `gateway providers add <name> --preset <name>` stores it in config.json, and checked as the
// daemon checks config.json: configured.ts) with its base URL pointed at a mock
// server in the matching quirk mode (mock-provider.ts). `profile` overrides the preset's quirk
// profile, so a test can show what the same server does to a provider without it.
import { configuredProviders, type StoredProvider } from '../../src/providers/configured.js';
import { findPreset } from '../../src/providers/presets.js';
import { staticSecrets } from '../../src/daemon/store/secrets.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { startMockProvider, type MockProvider, type MockQuirk } from './mock-provider.js';

export interface QuirkyGateway {
  url: string;
  key: string;
  gw: TestGateway;
  mock: MockProvider;
  /** The routing name of a model of the added provider (`deepseek/deepseek-chat`). */
  model(id: string): string;
  /** The JSON body of the last request the quirky server received. */
  lastBody(): Record<string, any>;
  /** How many requests it has received. */
  requests(): number;
  close(): Promise<void>;
}

export async function startQuirkyGateway(quirk: MockQuirk, profile?: string): Promise<QuirkyGateway> {
  const preset = findPreset(quirk);
  if (!preset) throw new Error(`no preset named ${quirk}`);
  // A local server (Ollama) takes no key: the mock accepts none, and the gateway sends none.
  const mock = await startMockProvider('openai', { quirk, key: `real-${quirk}-key-0123456789`, requireKey: preset.noKey !== true });
  const stored: StoredProvider = { protocol: preset.protocol, baseUrl: `${mock.origin}/v1`, preset: preset.id, displayName: preset.displayName };
  if (preset.noKey) stored.noKey = true;
  const quirks = profile ?? preset.quirks;
  if (quirks !== undefined) stored.quirks = quirks;
  const { providers, problems } = configuredProviders({ [quirk]: stored });
  if (problems.length > 0) throw new Error(problems.join('; '));
  const gw = await startTestGateway({ settings: { providers }, secrets: staticSecrets(preset.noKey ? {} : { [quirk]: mock.key }) });
  return {
    url: gw.url, key: gw.key, gw, mock,
    model: (id) => `${quirk}/${id}`,
    lastBody: () => JSON.parse(mock.requests.at(-1)!.body.toString('utf8')) as Record<string, any>,
    requests: () => mock.requests.length,
    async close() {
      await gw.close();
      await mock.close();
    },
  };
}
