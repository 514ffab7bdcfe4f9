// The daemon's and the CLI's SecretSource: GATEWAY_<P>_API_KEY > OS keychain > the 0600
// `insecure-secrets.json` (which exists only when the user chose --insecure-storage). Nothing is
// cached between calls, so `POST /admin/reload` sees a key set, changed or removed a moment ago.
import { join } from 'node:path';
import { statSync } from 'node:fs';
import type { ProviderId } from '../../providers/types.js';
import { FILES } from './paths.js';
import { readJsonSync, writePrivateFileSync } from './atomic.js';
import { envSecret, type ProviderSecret, type SecretOrigin, type SecretSource } from './secrets.js';
import { openKeychain, type Keychain } from './keychain.js';

/** What `providers list` and `doctor` need: the winning secret, what it shadows, keychain trouble. */
export interface SecretLookup {
  provider: ProviderId;
  secret?: ProviderSecret;
  /** Origins that also hold a key for this provider but lose to `secret`. */
  shadowed: SecretOrigin[];
  /** Set when the keychain could not be asked (names the backend and the problem). */
  keychainError?: string;
}

export interface GatewaySecretSource extends SecretSource {
  readonly keychain: Keychain;
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

  async function fromKeychain(provider: ProviderId): Promise<{ secret?: ProviderSecret; error?: string }> {
    try {
      const key = await keychain.get(provider);
      return key ? { secret: { key, origin: 'keychain' } } : {};
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  }

  function fromInsecureFile(provider: ProviderId): ProviderSecret | undefined {
    const key = readInsecureSecrets(opts.dir)[provider];
    if (!key) return undefined;
    if (!insecureFileIsPrivate(opts.dir)) log(`warning: ${insecureSecretsPath(opts.dir)} is readable by other users; run: chmod 600 ${insecureSecretsPath(opts.dir)}`);
    return { key, origin: 'insecure-file' };
  }

  return {
    keychain,
    async get(provider) {
      const fromEnv = envSecret(provider, env);
      if (fromEnv) return fromEnv;
      const kc = await fromKeychain(provider);
      if (kc.secret) return kc.secret;
      if (kc.error) log(`${provider}: keychain lookup failed: ${kc.error}`);
      return fromInsecureFile(provider);
    },
    async inspect(provider) {
      const found: ProviderSecret[] = [];
      const fromEnv = envSecret(provider, env);
      if (fromEnv) found.push(fromEnv);
      const kc = await fromKeychain(provider);
      if (kc.secret) found.push(kc.secret);
      const file = fromInsecureFile(provider);
      if (file) found.push(file);
      return {
        provider,
        secret: found[0],
        shadowed: found.slice(1).map((s) => s.origin),
        ...(kc.error ? { keychainError: kc.error } : {}),
      };
    },
  };
}
