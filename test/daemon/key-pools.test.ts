// Key pools as the attempt loop uses them: ProviderKeys built from the real SecretSource, with its
// keys from GATEWAY_<P>_API_KEY=k1,k2,… or from the stored pool (the 0600 insecure file and the
// key-pools.json index, as `providers set --add --insecure-storage` writes them; the keychain is
// pinned to a D-Bus address where nothing listens). Time is injected; nothing sleeps.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderKeys } from '../../src/daemon/access/provider-keys.js';
import { createSecretSource, writeInsecureSecret } from '../../src/daemon/store/secret-source.js';
import { addPoolLabel, keyAccount } from '../../src/daemon/store/key-pools.js';
import { GatewayError } from '../../src/daemon/http/errors.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gateway-pool-'));
  dirs.push(d);
  return d;
}
const NO_KEYCHAIN = (dir: string) => ({ GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'no-bus-here')}` });

const K = ['sk-pool-first-000000000000aaaa', 'sk-pool-second-00000000000bbbb', 'sk-pool-third-000000000000cccc'] as const;

/** ProviderKeys over GATEWAY_OPENAI_API_KEY=`value`, with a clock the test moves. */
async function envPool(value: string) {
  const clock = { t: 1_000_000 };
  const dir = tempDir();
  const keys = new ProviderKeys(createSecretSource({ dir, env: { ...NO_KEYCHAIN(dir), GATEWAY_OPENAI_API_KEY: value } }), { now: () => clock.t });
  await keys.reload();
  return { keys, clock };
}

async function labelsPicked(keys: ProviderKeys, n: number, opts: Parameters<ProviderKeys['pick']>[1] = {}): Promise<(string | undefined)[]> {
  const out: (string | undefined)[] = [];
  for (let i = 0; i < n; i++) out.push((await keys.pick('openai', opts))?.label);
  return out;
}

describe('a pool from GATEWAY_<P>_API_KEY=k1,k2,k3', () => {
  it('is three keys labelled env1..env3 in the order listed; spaces around commas are ignored', async () => {
    const { keys } = await envPool(`${K[0]}, ${K[1]} ,${K[2]}`);
    expect(keys.isPool('openai')).toBe(true);
    expect(keys.states('openai').map((s) => s.label)).toEqual(['env1', 'env2', 'env3']);
    expect(keys.values()).toEqual([...K]);
    expect(keys.origins().openai).toBe('environment');
  });

  it('round-robin spreads attempts evenly across the keys, skipping a resting one', async () => {
    const { keys, clock } = await envPool(K.join(','));
    expect(await labelsPicked(keys, 6)).toEqual(['env1', 'env2', 'env3', 'env1', 'env2', 'env3']);
    keys.rest('openai', 'env2', clock.t + 5_000);
    expect(await labelsPicked(keys, 4)).toEqual(['env1', 'env3', 'env1', 'env3']);
  });

  it('priority always takes the first healthy key in pool order', async () => {
    const { keys, clock } = await envPool(K.join(','));
    expect(await labelsPicked(keys, 3, { order: 'priority' })).toEqual(['env1', 'env1', 'env1']);
    keys.rest('openai', 'env1', clock.t + 1_000);
    expect(await labelsPicked(keys, 2, { order: 'priority' })).toEqual(['env2', 'env2']);
    clock.t += 1_000;
    expect((await keys.pick('openai', { order: 'priority' }))?.label).toBe('env1');
  });

  it('a resting key comes back when its retry-after has passed; earliestRest says when', async () => {
    const { keys, clock } = await envPool(K.slice(0, 2).join(','));
    const t0 = clock.t;
    keys.rest('openai', 'env1', t0 + 30_000);
    keys.rest('openai', 'env2', t0 + 10_000);
    expect(await keys.pick('openai')).toBeUndefined();
    expect(keys.earliestRest('openai')).toBe(t0 + 10_000);
    expect(keys.states('openai')).toEqual([
      { label: 'env1', masked: '…aaaa', state: 'resting', until: t0 + 30_000, origin: 'environment' },
      { label: 'env2', masked: '…bbbb', state: 'resting', until: t0 + 10_000, origin: 'environment' },
    ]);
    // A shorter retry-after does not cut a longer rest short.
    keys.rest('openai', 'env1', t0 + 1_000);
    expect(await keys.pick('openai', { now: t0 + 10_000 })).toEqual({ label: 'env2', value: K[1] });
    expect(await keys.pick('openai', { now: t0 + 29_999, order: 'priority' })).toEqual({ label: 'env2', value: K[1] });
    expect((await keys.pick('openai', { now: t0 + 30_000, order: 'priority' }))?.label).toBe('env1');
    clock.t = t0 + 30_000;
    expect(keys.earliestRest('openai')).toBeUndefined();
    expect(keys.states('openai').map((s) => s.state)).toEqual(['ok', 'ok']);
  });

  it('a refused key is never picked again and is reported with the status; a reload with the same value keeps it out', async () => {
    const { keys, clock } = await envPool(K.join(','));
    keys.refuse('openai', 'env2', 401);
    expect(await labelsPicked(keys, 4)).toEqual(['env1', 'env3', 'env1', 'env3']);
    clock.t += 24 * 3600_000; // refusal does not wear off with time
    expect(keys.states('openai')[1]).toEqual({ label: 'env2', masked: '…bbbb', state: 'refused', status: 401, origin: 'environment' });
    await keys.reload();
    expect(keys.states('openai')[1]!.state).toBe('refused');
    expect(await labelsPicked(keys, 2, { order: 'priority', exclude: new Set(['env1']) })).toEqual(['env3', 'env3']);
  });

  it('exclude skips the labels a request already used; none left is undefined, not an error', async () => {
    const { keys } = await envPool(K.join(','));
    expect((await keys.pick('openai', { exclude: new Set(['env1']), order: 'priority' }))?.label).toBe('env2');
    expect((await keys.pick('openai', { exclude: new Set(['env1', 'env2']) }))?.label).toBe('env3');
    expect(await keys.pick('openai', { exclude: new Set(['env1', 'env2', 'env3']) })).toBeUndefined();
    keys.refuse('openai', 'env3', 403);
    expect(await keys.pick('openai', { exclude: new Set(['env1', 'env2']) })).toBeUndefined();
  });

  it('states never carry a key, only its last four characters', async () => {
    const { keys, clock } = await envPool(K.join(','));
    keys.rest('openai', 'env1', clock.t + 1);
    keys.refuse('openai', 'env3', 401);
    const text = JSON.stringify(keys.states('openai'));
    for (const k of K) {
      expect(text).not.toContain(k);
      expect(text).not.toContain(k.slice(-5));
    }
  });

  it('callers that make one attempt (cached, require) get the healthy keys in turn', async () => {
    const { keys } = await envPool(K.slice(0, 2).join(','));
    keys.refuse('openai', 'env1', 401);
    expect([keys.cached('openai'), await keys.require('openai'), keys.cached('openai')]).toEqual([K[1], K[1], K[1]]);
  });
});

describe('a single key behaves as it always did', () => {
  it('one value without a comma: one key, not a pool, served even after a refusal', async () => {
    const { keys } = await envPool(K[0]);
    expect(keys.isPool('openai')).toBe(false);
    expect(keys.values()).toEqual([K[0]]);
    expect(keys.cached('openai')).toBe(K[0]);
    keys.refuse('openai', 'env1', 401);
    expect(await keys.pick('openai')).toBeUndefined();
    // The one-attempt path still sends it: the provider's own 401 then tells the user.
    expect(await keys.require('openai')).toBe(K[0]);
    expect(keys.states('openai')).toEqual([{ label: 'env1', masked: '…aaaa', state: 'refused', status: 401, origin: 'environment' }]);
  });

  it('no key at all: pick throws the 503 that names the command', async () => {
    const dir = tempDir();
    const keys = new ProviderKeys(createSecretSource({ dir, env: NO_KEYCHAIN(dir) }));
    await keys.reload();
    const err = await keys.pick('openai').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).message).toContain('gateway providers set openai');
    expect(keys.isPool('openai')).toBe(false);
    expect(keys.states('openai')).toEqual([]);
  });
});

describe('a stored pool (the insecure file and the key-pools.json index)', () => {
  it('is the default key then the added ones in the order added; a new value for a refused label brings it back', async () => {
    const dir = tempDir();
    writeInsecureSecret(dir, keyAccount('openai', 'default'), K[0]);
    writeInsecureSecret(dir, keyAccount('openai', 'work'), K[1]);
    addPoolLabel(dir, 'openai', 'work');
    writeInsecureSecret(dir, keyAccount('openai', 'key3'), K[2]);
    addPoolLabel(dir, 'openai', 'key3');
    const keys = new ProviderKeys(createSecretSource({ dir, env: NO_KEYCHAIN(dir) }));
    await keys.reload();
    expect(keys.states('openai').map((s) => [s.label, s.origin])).toEqual([['default', 'insecure-file'], ['work', 'insecure-file'], ['key3', 'insecure-file']]);

    keys.refuse('openai', 'work', 403);
    keys.refuse('openai', 'key3', 401);
    writeInsecureSecret(dir, keyAccount('openai', 'work'), 'sk-pool-replaced-0000000dddd'); // set again
    await keys.reload();
    expect(keys.states('openai').map((s) => s.state)).toEqual(['ok', 'ok', 'refused']);
    expect(await labelsPicked(keys, 3, { order: 'priority', exclude: new Set(['default']) })).toEqual(['work', 'work', 'work']);
    expect((await keys.pick('openai', { exclude: new Set(['default']) }))?.value).toBe('sk-pool-replaced-0000000dddd');
  });
});
