// `providers test` sends one tiny request built by the protocol's module: for a provider with a
// quirk profile it must be built with the profile, or a strict server refuses the probe itself
// (Mistral answers 422 to max_completion_tokens) and the verdict lies.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { probeProvider } from '../../src/daemon/admin/provider-probe.js';
import { Upstreams } from '../../src/daemon/relay/upstream.js';
import { configuredProviders } from '../../src/providers/configured.js';
import { setConfiguredProviders } from '../../src/providers/registry.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';

let mock: MockProvider;
const upstreams = new Upstreams();
beforeAll(async () => { mock = await startMockProvider('openai', { quirk: 'mistral', key: 'real-mistral-key-0123456789' }); });
afterEach(() => { setConfiguredProviders([]); });
afterAll(async () => { await upstreams.close(); await mock?.close(); });

function add(quirks: string | undefined): void {
  const { providers, problems } = configuredProviders({ mistral: { protocol: 'openai-chat', baseUrl: `${mock.origin}/v1`, preset: 'mistral', ...(quirks ? { quirks } : {}) } });
  expect(problems).toEqual([]);
  setConfiguredProviders(providers);
}

describe('providers test on a Mistral-like server', () => {
  it('with its profile the tiny request is accepted', async () => {
    add('mistral');
    const r = await probeProvider({ upstreams, provider: 'mistral', key: mock.key, model: 'mistral-small-latest' });
    expect(r.verdict).toBe('ok');
    const sent = JSON.parse(mock.requests.at(-1)!.body.toString('utf8')) as Record<string, unknown>;
    expect(sent).toHaveProperty('max_tokens');
    expect(sent).not.toHaveProperty('max_completion_tokens');
  });

  it('without it the server refuses the probe', async () => {
    add(undefined);
    const r = await probeProvider({ upstreams, provider: 'mistral', key: mock.key, model: 'mistral-small-latest' });
    expect(r.verdict).not.toBe('ok');
    expect(r.steps.at(-1)).toMatchObject({ step: 'request', ok: false, status: 422 });
  });
});
