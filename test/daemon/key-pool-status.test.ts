// GET /admin/status reports every held key's state (what `status`, `providers keys` and `doctor`
// show): a key the attempt loop rested after a 429 or took out after a 401/403, masked, never its
// value; and doctor turns those states into warnings with the command that sets the key again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { keyPoolChecks } from '../../src/cli/doctor-checks.js';
import type { PoolKeyReport } from '../../src/daemon/access/provider-keys.js';

const K = ['sk-status-one-0000000000001111', 'sk-status-two-0000000000002222', 'sk-status-three-00000000003333'];
let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway({ providerKeys: { openai: K, anthropic: 'sk-ant-single-key-000000004444' } }); });
afterAll(async () => { await gw?.close(); });

async function status(): Promise<{ text: string; keyPools: Record<string, PoolKeyReport[]> }> {
  const r = await fetch(`${gw.url}/admin/status`, { headers: { authorization: `Bearer ${gw.daemon.adminToken}` } });
  expect(r.status).toBe(200);
  const text = await r.text();
  return { text, keyPools: (JSON.parse(text) as { keyPools: Record<string, PoolKeyReport[]> }).keyPools };
}

describe('admin status and key states', () => {
  it('lists each provider\'s keys with label, masked value, state and origin', async () => {
    const { keyPools } = await status();
    expect(keyPools.openai).toEqual([
      { label: 'env1', masked: '…1111', state: 'ok', origin: 'environment' },
      { label: 'env2', masked: '…2222', state: 'ok', origin: 'environment' },
      { label: 'env3', masked: '…3333', state: 'ok', origin: 'environment' },
    ]);
    expect(keyPools.anthropic).toEqual([{ label: 'env1', masked: '…4444', state: 'ok', origin: 'environment' }]);
    expect(keyPools.gemini).toBeUndefined();
  });

  it('a resting and a refused key are reported as such, without their values; doctor warns with the fix', async () => {
    const until = Date.now() + 60_000;
    gw.daemon.ctx.providerKeys.rest('openai', 'env1', until);
    gw.daemon.ctx.providerKeys.refuse('openai', 'env3', 401);
    const { text, keyPools } = await status();
    expect(keyPools.openai).toEqual([
      { label: 'env1', masked: '…1111', state: 'resting', until, origin: 'environment' },
      { label: 'env2', masked: '…2222', state: 'ok', origin: 'environment' },
      { label: 'env3', masked: '…3333', state: 'refused', status: 401, origin: 'environment' },
    ]);
    for (const k of K) expect(text).not.toContain(k.slice(-8));

    const checks = keyPoolChecks(keyPools);
    expect(checks).toEqual([{
      id: 'keys-openai', ok: true, warning: true, title: 'openai key pool',
      detail: `key env3 (…3333) was refused by openai (401) and is out of use; key env1 (…1111) rests after a 429 until ${new Date(until).toISOString()}; 1 of 3 serves requests`,
      fix: 'replace it in GATEWAY_OPENAI_API_KEY and restart the gateway',
    }]);
  });

  it('doctor names the command that sets a stored refused key again', () => {
    const checks = keyPoolChecks({ openai: [
      { label: 'default', masked: '…aaaa', state: 'refused', status: 403, origin: 'keychain' },
      { label: 'work', masked: '…bbbb', state: 'refused', status: 401, origin: 'keychain' },
    ] });
    // The command as this process would be invoked (`gateway …`, or `npx gateway …` under vitest).
    expect(checks[0]!.fix).toMatch(/^(npx )?gateway providers set openai; (npx )?gateway providers set openai --label work$/);
    expect(keyPoolChecks({ openai: [{ label: 'default', masked: '…aaaa', state: 'ok', origin: 'keychain' }] })).toEqual([]);
  });
});
