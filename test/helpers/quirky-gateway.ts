// A real daemon whose OpenAI-compatible provider is a mock in a quirk mode (mock-provider.ts),
// carrying a quirk profile. Until user-added providers exist, the profile is put on the built-in
// `openai` descriptor of this test process (each test file has its own module instances) and put
// back on close; once `providers add` lands, this helper adds a provider of its own instead.
import { provider } from '../../src/providers/registry.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import type { MockQuirk } from './mock-provider.js';

export interface QuirkyGateway {
  url: string;
  key: string;
  gw: TestGateway;
  /** The routing name of a model of the quirky provider. */
  model(id: string): string;
  /** The JSON body of the last request the quirky server received. */
  lastBody(): Record<string, any>;
  /** How many requests it has received. */
  requests(): number;
  close(): Promise<void>;
}

export async function startQuirkyGateway(quirk: MockQuirk, profile: string): Promise<QuirkyGateway> {
  const descriptor = provider('openai') as { quirks?: string };
  const before = descriptor.quirks;
  descriptor.quirks = profile;
  const gw = await startTestGateway({ openaiQuirk: quirk });
  const mock = gw.mocks.openai;
  return {
    url: gw.url, key: gw.key, gw,
    model: (id) => `openai/${id}`,
    lastBody: () => JSON.parse(mock.requests.at(-1)!.body.toString('utf8')) as Record<string, any>,
    requests: () => mock.requests.length,
    async close() {
      if (before === undefined) delete descriptor.quirks; else descriptor.quirks = before;
      await gw.close();
    },
  };
}
