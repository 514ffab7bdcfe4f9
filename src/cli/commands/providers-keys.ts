// `gateway providers keys <provider> [--json] [--remove <label>]`: a provider's key pool. Each key
// by label, its last four characters at most, where it comes from and, from the running gateway,
// its state: ok, resting after a 429 (until when), or refused by the provider (401/403). Without
// a running gateway the keys come from storage and have no state.
import type { ProviderId } from '../../providers/types.js';
import { provider as descriptor } from '../../providers/registry.js';
import type { PoolKeyReport } from '../../daemon/access/provider-keys.js';
import { maskKey } from '../../daemon/access/key-pool.js';
import { DEFAULT_LABEL, validatePoolLabel } from '../../daemon/store/key-pools.js';
import { CliError, cliStateDir, note, out, printJson, table } from '../common.js';
import { adminRequest, findDaemon, reloadAndReport, type DaemonStatus } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';
import { deleteStoredKey } from './providers.js';

const ORIGIN_LABEL = { environment: 'environment', keychain: 'keychain', 'insecure-file': 'insecure file' } as const;

type KeyRow = Omit<PoolKeyReport, 'state'> & { state: PoolKeyReport['state'] | null };

export async function providerKeys(provider: ProviderId, opts: { json?: boolean; remove?: string }): Promise<void> {
  const d = descriptor(provider);
  if (!d.auth) throw new CliError(`${provider} takes no key (it was added with --no-key)`);
  if (opts.remove !== undefined) return removeKey(provider, opts.remove);
  const dir = cliStateDir();
  let from: 'gateway' | 'storage' = 'storage';
  let rows: KeyRow[] | undefined;
  if (findDaemon(dir)) {
    try {
      const s = await adminRequest<DaemonStatus>(dir, 'GET', 'status');
      if (s.keyPools) { rows = s.keyPools[provider] ?? []; from = 'gateway'; }
    } catch (e) {
      note(`warning: the running gateway did not answer (${(e as Error).message}); showing the stored keys, without state`);
    }
  }
  if (!rows) {
    const { createSecretSource } = await import('../../daemon/store/secret-source.js');
    const pool = await createSecretSource({ dir, env: process.env }).pool(provider);
    rows = pool.map((k) => ({ label: k.label, masked: maskKey(k.key), state: null, origin: k.origin }));
  }
  if (opts.json) {
    printJson({ provider, from, keys: rows });
    return;
  }
  if (rows.length === 0) {
    out(`${provider} has no key${from === 'gateway' ? ' in the running gateway' : ''}; set one: ${gatewayCmd(`providers set ${provider}`)}`);
    return;
  }
  const lines = [['LABEL', 'KEY', 'STATE', 'ORIGIN']];
  for (const r of rows) lines.push([r.label, r.masked, stateText(r), ORIGIN_LABEL[r.origin]]);
  for (const l of table(lines)) out(l);
  out('');
  out(from === 'gateway' ? 'States are the running gateway\'s.' : 'The gateway is not running: a key\'s state (resting, refused) is known only while it runs.');
}

function stateText(r: KeyRow): string {
  if (r.state === null) return '-';
  if (r.state === 'resting') return `resting until ${new Date(r.until!).toISOString()} (after a 429)`;
  if (r.state === 'refused') return `refused (${r.status ?? '401/403'}) until set again`;
  return 'ok';
}

async function removeKey(provider: ProviderId, label: string): Promise<void> {
  try { validatePoolLabel(label); } catch (e) { if (label !== DEFAULT_LABEL) throw new CliError((e as Error).message); }
  const { fromKeychain, fromFile, keychainError } = await deleteStoredKey(provider, label);
  if (!fromKeychain && !fromFile) {
    if (keychainError) throw new CliError(`could not remove the ${provider} key "${label}": ${keychainError}`);
    throw new CliError(`no ${provider} key labelled "${label}" is stored (see: ${gatewayCmd(`providers keys ${provider}`)})`);
  }
  out(`Removed the ${provider} key "${label}" from ${[fromKeychain && 'the keychain', fromFile && 'the insecure file'].filter(Boolean).join(' and ')}.`);
  if (keychainError) note(`warning: the keychain could not be checked (${keychainError})`);
  const envName = descriptor(provider).keyEnv;
  if (process.env[envName]) note(`note: ${envName} is set in this environment and provides the ${provider} keys`);
  await reloadAndReport(cliStateDir());
}
