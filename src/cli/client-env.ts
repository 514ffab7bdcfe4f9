// What `env` prints for SDKs: the daemon's base URLs and a "client key" (`run` and `chat` use the
// same variables with a short-lived key instead, see session-key.ts). Proxy keys are stored only
// as hashes, so a key printed later must have its plaintext held somewhere: client keys are
// ordinary proxy keys whose plaintext is also kept in the keychain (account `proxy-key:<name>`),
// created on first use. A key made by `gateway keys create` was shown once and is not held, so it
// cannot be used here. A team daemon's state directory makes them in the shared store (key-store.ts).
import { BUILTIN_PROVIDERS, builtinProvider } from '../providers/registry.js';
import { hashKey, keyStatus, sameHash, type KeyRecord } from '../daemon/store/keys.js';
import type { KeyRecords } from '../daemon/store/key-records.js';
import { ensureStateDir } from '../daemon/store/paths.js';
import { CliError, note } from './common.js';
import { reloadAndReport } from './daemon-client.js';
import { gatewayCmd } from './invocation.js';
import { withKeyStore } from './key-store.js';

export const CLIENT_KEY_ACCOUNT_PREFIX = 'proxy-key:';
export const DEFAULT_CLIENT_KEY_NAME = 'env';

/** A provider id (its SDK's variables), or `all`. */
export type EnvTarget = string;
export const ENV_TARGETS: readonly EnvTarget[] = [...BUILTIN_PROVIDERS.map((p) => p.id), 'all'];

const targets = (target: EnvTarget) => (target === 'all' ? BUILTIN_PROVIDERS : [builtinProvider(target)]);

/** Each SDK's base URL (its native prefix, as the SDK expects it to end) and key variables. */
export function clientEnvVars(url: string, key: string, target: EnvTarget): [string, string][] {
  return targets(target).flatMap((p): [string, string][] => [[p.sdk.baseUrlVar, `${url}/${p.id}${p.sdk.basePath}`], [p.sdk.keyVar, key]]);
}

/** Variables an SDK prefers over the ones we set, so a tool would not use the gateway key. */
export function conflictingVars(target: EnvTarget, env: NodeJS.ProcessEnv): string[] {
  return targets(target).flatMap((p) => p.sdk.preferredVars).filter((n) => env[n]);
}

function validName(name: string): string {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) throw new CliError(`--key "${name}" must be 1-64 letters, digits, '.', '_' or '-'`);
  return name;
}

function matchingActive(keys: readonly KeyRecord[], name: string, key: string): KeyRecord | undefined {
  const h = hashKey(key);
  return keys.find((k) => k.name === name && keyStatus(k) === 'active' && sameHash(k.hash, h));
}

/** One short line naming both ways out; the keychain's long story is doctor's to tell. */
function noKeychain(e: Error): CliError {
  const why = (e as { code?: string }).code === 'unavailable' ? 'none is usable here' : e.message;
  return new CliError(`cannot keep a client key in a keychain: ${why} (see: ${gatewayCmd('doctor')}); set the variables yourself with a key from \`${gatewayCmd('keys create')}\`, or re-run with --insecure-storage`);
}

/**
 * The plaintext of the client key `name`, creating it (and storing it in the keychain, or in the
 * 0600 insecure file with `insecureStorage`) when there is no usable one yet.
 */
export async function ensureClientKey(opts: { dir: string; env: NodeJS.ProcessEnv; name?: string; insecureStorage?: boolean }): Promise<{ key: string; record: KeyRecord; created: boolean }> {
  const name = validName(opts.name ?? DEFAULT_CLIENT_KEY_NAME);
  const dir = ensureStateDir(opts.dir);
  const created = await withKeyStore(dir, (store) => clientKey(store, dir, name, opts), opts.env);
  if (created.created) await reloadAndReport(dir);
  return created;
}

async function clientKey(store: KeyRecords, dir: string, name: string, opts: { env: NodeJS.ProcessEnv; insecureStorage?: boolean }): Promise<{ key: string; record: KeyRecord; created: boolean }> {
  const account = CLIENT_KEY_ACCOUNT_PREFIX + name;
  const { openKeychain } = await import('../daemon/store/keychain.js');
  const secrets = await import('../daemon/store/secret-source.js');
  const keychain = openKeychain({ env: opts.env });

  let keychainError: Error | undefined;
  const held: string[] = [];
  try {
    const k = await keychain.get(account);
    if (k) held.push(k);
  } catch (e) {
    keychainError = e instanceof Error ? e : new Error(String(e));
  }
  const fromFile = secrets.readInsecureSecrets(dir)[account];
  if (fromFile) held.push(fromFile);
  const keys = await store.list();
  for (const key of held) {
    const record = matchingActive(keys, name, key);
    if (record) return { key, record, created: false };
  }

  const existing = keys.find((k) => k.name === name && keyStatus(k) === 'active');
  if (existing && keychainError) {
    throw new CliError(`cannot read the client key "${name}" from the keychain: ${keychainError.message}`);
  }
  if (existing) {
    throw new CliError(`the key "${name}" (${existing.id}) was not created by env, so its plaintext is not held and cannot be shown again; use another --key name, or revoke it: ${gatewayCmd(`keys revoke ${existing.id}`)}`);
  }

  if (!opts.insecureStorage && keychainError) throw noKeychain(keychainError);
  const { key, record } = await store.create({ name });
  try {
    if (opts.insecureStorage) {
      const path = secrets.writeInsecureSecret(dir, account, key);
      note(`WARNING: the client key "${name}" is stored UNENCRYPTED in ${path} (mode 0600); any program running as you can read it.`);
    } else {
      await keychain.set(account, key);
    }
  } catch (e) {
    await store.revoke(record.id);
    throw noKeychain(e instanceof Error ? e : new Error(String(e)));
  }
  note(`Created client key "${name}" (${record.id}); its plaintext is kept in ${opts.insecureStorage ? 'the insecure file' : 'the keychain'} for env. Revoke it with: ${gatewayCmd(`keys revoke ${name}`)}`);
  return { key, record, created: true };
}

/** After `keys revoke`: forget the plaintext of a revoked client key (best effort). */
export async function forgetClientKey(opts: { dir: string; env: NodeJS.ProcessEnv; record: KeyRecord }): Promise<boolean> {
  const account = CLIENT_KEY_ACCOUNT_PREFIX + opts.record.name;
  const secrets = await import('../daemon/store/secret-source.js');
  let forgot = false;
  const fromFile = secrets.readInsecureSecrets(opts.dir)[account];
  if (fromFile && sameHash(hashKey(fromFile), opts.record.hash)) forgot = secrets.deleteInsecureSecret(opts.dir, account);
  try {
    const { openKeychain } = await import('../daemon/store/keychain.js');
    const keychain = openKeychain({ env: opts.env });
    const held = await keychain.get(account);
    if (held && sameHash(hashKey(held), opts.record.hash)) forgot = (await keychain.delete(account)) || forgot;
  } catch { /* no keychain: nothing held there */ }
  return forgot;
}
