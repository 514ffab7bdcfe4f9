// The daemon's and the CLI's SecretSource: GATEWAY_<P>_API_KEY > OS keychain > the 0600
// `insecure-secrets.json` (which exists only when the user chose --insecure-storage). Nothing is
// cached between calls, so `POST /admin/reload` sees a key set, changed or removed a moment ago.
// A pool (key-pools.ts) from the environment replaces the stored one whole; a stored pool's keys
// are each looked up as the single key always was (keychain, else the file).
import { join } from 'node:path';
import { statSync } from 'node:fs';
import type { ProviderId } from '../../providers/types.js';
import { FILES } from './paths.js';
import { readJsonSync, writePrivateFileSync } from './atomic.js';
import { envSecrets, type PoolSecret, type ProviderSecret, type SecretOrigin, type SecretSource } from './secrets.js';
import { keyAccount, storedLabels } from './key-pools.js';
import { openKeychain, type Keychain } from './keychain.js';

/** What `providers list` and `doctor` need: the winning secret, what it shadows, keychain trouble. */
export interface SecretLookup {
  provider: ProviderId;
  secret?: ProviderSecret;
  /** Origins that also hold a key for this provider but lose to `secret`. */
  shadowed: SecretOrigin[];
  /** Set when the keychain could not be asked (names the backend and the problem). */
  keychainError?: string;
  /** How many keys the provider's pool holds (the winning origin's): 1 for a single key, 0 for none. */
  poolSize: number;
}

export interface GatewaySecretSource extends SecretSource {
  readonly keychain: Keychain;
  pool(provider: ProviderId): Promise<PoolSecret[]>;
  inspect(provider: ProviderId): Promise<SecretLookup>;
}

export interface SecretSourceOptions {
  dir: string;
  env?: NodeJS.ProcessEnv;
  keychain?: Keychain;
  /** Called with a one-line, secret-free message when the keychain fails. */
  log?: (line: string) => void;
}

// ---- the insecure file ----------------------------------------------------------------------

export type InsecureSecrets = Record<string, string>;

export function insecureSecretsPath(dir: string): string {
  return join(dir, FILES.insecureSecrets);
}

export function readInsecureSecrets(dir: string): InsecureSecrets {
  const raw = readJsonSync<unknown>(insecureSecretsPath(dir), {});
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const out: InsecureSecrets = {};
  for (const [k, v] of Object.entries(raw)) if (typeof v === 'string' && v) out[k] = v;
  return out;
}

/** Stores one entry (a provider id, or `proxy-key:<name>`) in the 0600 file. */
export function writeInsecureSecret(dir: string, account: string, secret: string): string {
  const path = insecureSecretsPath(dir);
  writePrivateFileSync(path, JSON.stringify({ ...readInsecureSecrets(dir), [account]: secret }, null, 2) + '\n');
  return path;
}

/** Removes one entry; deletes nothing else. True when there was one. */
export function deleteInsecureSecret(dir: string, account: string): boolean {
  const all = readInsecureSecrets(dir);
  if (!(account in all)) return false;
  delete all[account];
  writePrivateFileSync(insecureSecretsPath(dir), JSON.stringify(all, null, 2) + '\n');
  return true;
}

function insecureFileIsPrivate(dir: string): boolean {
  try {
    return process.platform === 'win32' || (statSync(insecureSecretsPath(dir)).mode & 0o077) === 0;
  } catch {
    return true;
  }
}

// ---- the source ------------------------------------------------------------------------------

export function createSecretSource(opts: SecretSourceOptions): GatewaySecretSource {
  const env = opts.env ?? process.env;
  const keychain = opts.keychain ?? openKeychain({ env });
  const log = opts.log ?? (() => {});

  async function fromKeychain(account: string): Promise<{ secret?: ProviderSecret; error?: string }> {
    try {
      const key = await keychain.get(account);
      return key ? { secret: { key, origin: 'keychain' } } : {};
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  }

  function fromInsecureFile(account: string): ProviderSecret | undefined {
    const key = readInsecureSecrets(opts.dir)[account];
    if (!key) return undefined;
    if (!insecureFileIsPrivate(opts.dir)) log(`warning: ${insecureSecretsPath(opts.dir)} is readable by other users; run: chmod 600 ${insecureSecretsPath(opts.dir)}`);
    return { key, origin: 'insecure-file' };
  }

  /**
   * The stored pool: each label's key from the keychain, else the file (one keychain call for all:
   * same tick). `fileShadowed`: a label the keychain holds has a losing entry in the file too.
   */
  async function stored(provider: ProviderId): Promise<{ pool: PoolSecret[]; fileShadowed: boolean; keychainError?: string }> {
    const labels = storedLabels(opts.dir, provider);
    const kc = await Promise.all(labels.map((l) => fromKeychain(keyAccount(provider, l))));
    const pool: PoolSecret[] = [];
    let fileShadowed = false;
    labels.forEach((label, i) => {
      const file = fromInsecureFile(keyAccount(provider, label));
      const kept = kc[i]!.secret;
      if (kept && file) fileShadowed = true;
      const s = kept ?? file;
      if (s) pool.push({ ...s, label });
    });
    const keychainError = kc.find((r) => r.error)?.error;
    return { pool, fileShadowed, ...(keychainError ? { keychainError } : {}) };
  }

  async function pool(provider: ProviderId): Promise<PoolSecret[]> {
    const fromEnv = envSecrets(provider, env);
    if (fromEnv.length) return fromEnv;
    const s = await stored(provider);
    if (s.keychainError) log(`${provider}: keychain lookup failed: ${s.keychainError}`);
    return s.pool;
  }

  return {
    keychain,
    pool,
    async get(provider) {
      const first = (await pool(provider))[0];
      return first ? { key: first.key, origin: first.origin } : undefined;
    },
    async inspect(provider) {
      // The environment's pool replaces the stored one whole; in the stored pool the keychain wins
      // over the file label by label. What loses is reported as shadowed.
      const fromEnv = envSecrets(provider, env);
      const s = await stored(provider);
      const storedOrigins = (['keychain', 'insecure-file'] as const).filter((o) => s.pool.some((k) => k.origin === o) || (o === 'insecure-file' && s.fileShadowed));
      const winner = fromEnv.length ? fromEnv : s.pool;
      const shadowed: SecretOrigin[] = fromEnv.length ? storedOrigins : s.fileShadowed ? ['insecure-file'] : [];
      const first = winner[0];
      return {
        provider,
        ...(first ? { secret: { key: first.key, origin: first.origin } } : {}),
        shadowed,
        poolSize: winner.length,
        ...(s.keychainError ? { keychainError: s.keychainError } : {}),
      };
    },
  };
}
