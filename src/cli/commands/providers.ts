// `gateway providers set|list|remove|add|keys|test|presets`: the providers the gateway reaches and
// their real keys, kept in the OS keychain (or, only when asked, in a 0600 file). A key is never
// printed: at most its last four characters. `add`, `keys` and `test` live in providers-add.ts,
// providers-keys.ts and providers-test.ts.
import { Argument, Option, type Command } from 'commander';
import type { ProviderId } from '../../providers/types.js';
import { allProviders, BUILTIN_PROVIDERS, provider as descriptor } from '../../providers/registry.js';
import { PRESETS } from '../../providers/presets.js';
import { PROTOCOL_IDS } from '../../providers/configured.js';
import { CliError, cliStateDir, note, out, printJson, table, providerChoices } from '../common.js';
import { cleanSecretInput, lastFour, promptHidden, readStdin } from '../prompt.js';
import { reloadAndReport } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';
import { addPoolLabel, DEFAULT_LABEL, keyAccount, nextPoolLabel, removePoolLabel, storedLabels, validatePoolLabel } from '../../daemon/store/key-pools.js';

const ORIGIN_LABEL = { environment: 'environment', keychain: 'keychain', 'insecure-file': 'insecure file' } as const;

function providerArg(): Argument {
  return new Argument('<provider>', providerChoices().join(', ')).choices(providerChoices());
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerProviders(program: Command): void {
  const cmd = program.command('providers').description('the providers the gateway reaches (built-in and added) and their API keys (kept in the OS keychain)');

  cmd.command('set')
    .description('store a provider API key in the OS keychain (read from a hidden prompt, or from stdin with --stdin)')
    .addArgument(providerArg())
    .option('--stdin', `read the key from stdin instead of prompting (e.g. printenv KEY | ${gatewayCmd('providers set openai --stdin')})`)
    .option('--insecure-storage', `store the key in a plain 0600 file (insecure-secrets.json in the state directory) instead of the keychain; for machines without a usable keychain`)
    .option('--add', 'add the key to the provider\'s key pool beside the keys it has (requests are spread across them), instead of replacing its default key')
    .option('--label <label>', 'the pool key\'s label: with --add, the new key\'s (default key2, key3, …); without, the existing key to replace')
    .addHelpText('after', `\nThe environment variables ${BUILTIN_PROVIDERS.map((p) => p.keyEnv).join(', ')} (GATEWAY_<NAME>_API_KEY for an added provider) override stored keys; several keys separated by commas make a pool (labels env1, env2, …).\nA running gateway reloads its keys at once. See a pool: ${gatewayCmd('providers keys <provider>')}`)
    .action((provider: ProviderId, opts: SetOptions) => setProvider(provider, opts));

  cmd.command('keys')
    .description('the provider\'s keys (its pool): label, last 4 characters, where each comes from and, while the gateway runs, its state (ok, resting after a 429, refused)')
    .addArgument(providerArg())
    .option('--json', 'machine-readable output')
    .option('--remove <label>', 'delete the stored key with this label from the pool')
    .action(async (provider: ProviderId, opts: { json?: boolean; remove?: string }) => (await import('./providers-keys.js')).providerKeys(provider, opts));

  cmd.command('list')
    .description('every provider with its protocol, base URL, quirk profile and where its key comes from (environment, keychain or insecure file); never the key')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => listProviders(opts));

  cmd.command('remove')
    .description('remove an added provider and its stored key; for a built-in provider, delete its stored key')
    .addArgument(providerArg())
    .action((provider: ProviderId) => removeProvider(provider));

  cmd.command('add')
    .description('add a provider that speaks one of the four protocols: from a preset, or any compatible endpoint')
    .argument('<name>', 'its name: the routing prefix (<name>/<model>), the native prefix (/<name>/…) and the keychain entry')
    .addOption(new Option('--preset <preset>', 'start from a preset (see: providers presets)').choices(PRESETS.map((p) => p.id)))
    .addOption(new Option('--protocol <protocol>', 'the protocol its API speaks').choices(PROTOCOL_IDS))
    .option('--base-url <url>', 'its base URL as its SDK takes it, path included (http://localhost:11434/v1, https://api.deepseek.com/anthropic)')
    .option('--resource <name>', 'the Azure resource (fills <resource> in the azure preset\'s base URL)')
    .option('--no-key', 'it takes no key (a local server): none is asked for, and no credential is ever sent to it')
    .option('--key', 'ask for a key even where the preset is a local server (vLLM started with --api-key)')
    .option('--header <name=value>', 'an extra header for every upstream call (repeatable), e.g. HTTP-Referer=https://example.com; never a credential', collect)
    .option('--models <a,b>', 'its model ids, for a server without a models endpoint')
    .option('--quirks <profile>', 'the quirk profile its calls follow (a preset sets its own)')
    .option('--stdin', 'read the key from stdin instead of prompting')
    .option('--insecure-storage', 'store the key in a plain 0600 file instead of the keychain')
    .addHelpText('after', `
The key is kept in the keychain under the provider's name; GATEWAY_<NAME>_API_KEY overrides it.
A running gateway picks the provider up at once. Examples:
  ${gatewayCmd('providers add ollama --preset ollama')}
  printenv DEEPSEEK_API_KEY | ${gatewayCmd('providers add deepseek --preset deepseek --stdin')}
  ${gatewayCmd('providers add box --protocol openai-chat --base-url http://10.0.0.5:4000/v1 --no-key')}`)
    .action(async (name: string, opts: AddOptions) => (await import('./providers-add.js')).addProvider(name, opts));

  cmd.command('test')
    .description('check a provider: its models list and one tiny request; says plainly what works and what does not')
    .addArgument(providerArg())
    .option('--model <id>', 'the model for the test request (default: the first it lists)')
    .option('--json', 'machine-readable output')
    .action(async (provider: ProviderId, opts: { model?: string; json?: boolean }) => (await import('./providers-test.js')).testProvider(provider, opts));

  cmd.command('presets')
    .description('the presets `providers add --preset` knows')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => listPresets(opts));
}

export interface KeyInputOptions { stdin?: boolean; insecureStorage?: boolean }

interface SetOptions extends KeyInputOptions { add?: boolean; label?: string }

export interface AddOptions extends KeyInputOptions {
  preset?: string;
  protocol?: string;
  baseUrl?: string;
  resource?: string;
  /** false with --no-key, true with --key, undefined with neither. */
  key?: boolean;
  header?: string[];
  models?: string;
  quirks?: string;
}

async function openSource() {
  const { createSecretSource } = await import('../../daemon/store/secret-source.js');
  return createSecretSource({ dir: cliStateDir(), env: process.env });
}

/** Reads a key the way every command does: --stdin, else a hidden prompt; refuses a proxy key. */
export async function readProviderKey(provider: string, opts: KeyInputOptions): Promise<string> {
  const raw = opts.stdin ? await readStdin() : await promptHidden(`${provider} API key (input hidden): `);
  const key = cleanSecretInput(raw, `${provider} API key`);
  if (key.startsWith('sk-proxy-')) throw new CliError('that is a gateway proxy key (sk-proxy-…), not a provider key; give the key from the provider\'s console');
  return key;
}

/**
 * Stores a provider key in the keychain (or the insecure file when asked) under its pool label
 * (`default`: the provider's one key, as always); lists a new label in the pool index. Returns
 * where, for the message.
 */
export async function storeProviderKey(provider: string, key: string, opts: KeyInputOptions, label = DEFAULT_LABEL): Promise<string> {
  const dir = cliStateDir();
  const { ensureStateDir } = await import('../../daemon/store/paths.js');
  ensureStateDir(dir);
  const store = await import('../../daemon/store/secret-source.js');
  const source = await openSource();
  const kc = source.keychain;
  const account = keyAccount(provider, label);
  const what = label === DEFAULT_LABEL ? `the ${provider} key` : `the ${provider} key "${label}"`;
  if (opts.insecureStorage) {
    const path = store.writeInsecureSecret(dir, account, key);
    addPoolLabel(dir, provider, label);
    note(`WARNING: ${what} is stored UNENCRYPTED in ${path} (mode 0600).`);
    note('WARNING: any program running as your user can read it. Prefer a keychain where one is available.');
    // A keychain entry would win over the file; drop it so the key just given is the one used.
    await kc.delete(account).catch(() => false);
    return 'the insecure file';
  }
  let backendName: string;
  try {
    await kc.set(account, key);
    const backend = await kc.backend(); // known from the call above
    backendName = backend.name;
    if (!backend.survivesReboot) note(`warning: the ${backend.name} does not survive a reboot; you will have to set the key again after one`);
  } catch (e) {
    const { KeychainError } = await import('../../daemon/store/keychain.js');
    if (!(e instanceof KeychainError)) throw e;
    throw new CliError(`cannot store the key in a keychain: ${e.message}. To keep it in a plain 0600 file instead, re-run with --insecure-storage`);
  }
  addPoolLabel(dir, provider, label);
  if (store.deleteInsecureSecret(dir, account)) note(`removed the old ${what.replace(/^the /, '')} from the insecure file`);
  return backendName;
}

/** The label `providers set` stores under: checked before the key is asked for. */
function labelToSet(provider: string, opts: SetOptions): string {
  const extras = storedLabels(cliStateDir(), provider).filter((l) => l !== DEFAULT_LABEL);
  const label = opts.label === undefined ? undefined : checkLabel(opts.label);
  if (opts.add) {
    if (label === DEFAULT_LABEL) throw new CliError(`the default key is set without --add: ${gatewayCmd(`providers set ${provider}`)}`);
    if (label === undefined) return nextPoolLabel(extras);
    if (extras.includes(label)) throw new CliError(`the ${provider} pool already has a key labelled "${label}"; replace it: ${gatewayCmd(`providers set ${provider} --label ${label}`)}, or remove it: ${gatewayCmd(`providers keys ${provider} --remove ${label}`)}`);
    return label;
  }
  if (label === undefined || label === DEFAULT_LABEL) return DEFAULT_LABEL;
  if (!extras.includes(label)) throw new CliError(`the ${provider} pool has no key labelled "${label}" (see: ${gatewayCmd(`providers keys ${provider}`)}); add one: ${gatewayCmd(`providers set ${provider} --add --label ${label}`)}`);
  return label;
}

function checkLabel(label: string): string {
  try { return validatePoolLabel(label); } catch (e) { throw new CliError((e as Error).message); }
}

async function setProvider(provider: ProviderId, opts: SetOptions): Promise<void> {
  const d = descriptor(provider);
  if (!d.auth) throw new CliError(`${provider} was added with --no-key: it takes no key (re-add it without --no-key to give it one: ${gatewayCmd(`providers add ${provider} …`)})`);
  const label = labelToSet(provider, opts);
  const key = await readProviderKey(provider, opts);
  if (d.keyPrefix && !key.startsWith(d.keyPrefix)) note(`note: ${d.displayName} keys usually start with "${d.keyPrefix}"; storing it anyway`);
  const where = await storeProviderKey(provider, key, opts, label);
  if (label === DEFAULT_LABEL) out(`Stored the ${provider} key (${lastFour(key)}) in ${where}.`);
  else out(`Stored the ${provider} key "${label}" (${lastFour(key)}) in ${where}; its pool: ${storedLabels(cliStateDir(), provider).join(', ')}.`);
  if (process.env[d.keyEnv]) note(`note: ${d.keyEnv} is set in this environment and overrides the stored key${label === DEFAULT_LABEL ? '' : 's'}`);
  await reloadAndReport(cliStateDir());
}

/** A provider's base URL as the daemon in this environment would use it. */
function baseUrlOf(id: string): string {
  const d = descriptor(id);
  const envOrigin = d.source === 'builtin' ? process.env[BUILTIN_PROVIDERS.find((b) => b.id === id)!.baseUrlEnv] : undefined;
  return `${envOrigin?.replace(/\/+$/, '') ?? d.origin}${d.basePath}`;
}

async function listProviders(opts: { json?: boolean }): Promise<void> {
  const source = await openSource();
  const providers = allProviders();
  // Providers that take no key are not looked up.
  const lookups = await Promise.all(providers.map((p) => (p.auth ? source.inspect(p.id) : undefined)));
  let backend: { id: string; name: string; survivesReboot: boolean; available: boolean; error?: string };
  // The lookups above already asked the keychain; don't wait for a hung one twice.
  const failed = lookups.find((l) => l?.keychainError)?.keychainError;
  try {
    if (failed) throw new Error(failed);
    const b = await source.keychain.backend();
    backend = { ...b, available: true };
  } catch (e) {
    backend = { id: 'none', name: 'none', survivesReboot: false, available: false, error: (e as Error).message };
  }
  const rows = providers.map((p, i) => {
    const l = lookups[i];
    return {
      provider: p.id,
      source: p.source,
      protocol: p.protocol,
      baseUrl: baseUrlOf(p.id),
      quirks: p.quirks ?? null,
      preset: p.preset ?? null,
      keyless: !p.auth,
      configured: !p.auth || Boolean(l?.secret),
      origin: l?.secret?.origin ?? null,
      last4: l?.secret ? lastFour(l.secret.key).slice(1) || null : null,
      envVar: p.auth ? p.keyEnv : null,
      shadowed: l?.shadowed ?? [],
      /** How many keys its pool holds (1: a single key, as usual). */
      keys: l?.poolSize ?? 0,
      headers: Object.keys(p.headers),
      models: p.models ?? null,
    };
  });
  if (opts.json) {
    printJson({ keychain: backend, providers: rows });
    return;
  }
  const lines = [['PROVIDER', 'STATUS', 'ORIGIN', 'KEY', 'PROTOCOL', 'BASE URL', 'PROFILE', 'NOTE']];
  for (const r of rows) {
    const noteText = [
      r.source === 'configured' ? `added${r.preset ? ` from preset ${r.preset}` : ''}` : '',
      r.origin === 'environment' ? `from ${r.envVar}` : '',
      r.keys > 1 ? `a pool of ${r.keys} keys (${gatewayCmd(`providers keys ${r.provider}`)})` : '',
      r.shadowed.length ? `overrides ${r.shadowed.map((o) => ORIGIN_LABEL[o]).join(', ')}` : '',
      r.headers.length ? `headers: ${r.headers.join(', ')}` : '',
      r.configured ? '' : `set it: ${gatewayCmd(`providers set ${r.provider}`)}`,
    ].filter(Boolean).join('; ');
    const status = r.keyless ? 'no key needed' : r.configured ? 'configured' : 'not set';
    lines.push([r.provider, status, r.origin ? ORIGIN_LABEL[r.origin] : '-', r.last4 ? `…${r.last4}` : '-', r.protocol, r.baseUrl, r.quirks ?? '-', noteText]);
  }
  for (const l of table(lines)) out(l);
  out('');
  // An added provider config.json could not load is named, not silently missing.
  const { readConfig } = await import('../../daemon/store/config.js');
  for (const p of readConfig(cliStateDir()).problems) note(`warning: ${p} (left out)`);
  if (backend.available) {
    out(`Keychain: ${backend.name}${backend.survivesReboot ? '' : ' (does not survive a reboot)'}`);
  } else {
    out(`Keychain: none usable (${backend.error})`);
  }
}

/**
 * Deletes stored keys of a provider from the keychain and the insecure file: one label, or the
 * whole pool (and its index entry) when `label` is undefined; says where they were.
 */
export async function deleteStoredKey(provider: string, label?: string): Promise<{ fromKeychain: boolean; fromFile: boolean; labels: string[]; keychainError?: string }> {
  const store = await import('../../daemon/store/secret-source.js');
  const source = await openSource();
  const dir = cliStateDir();
  const labels = label === undefined ? storedLabels(dir, provider) : [label];
  let fromKeychain = false;
  let fromFile = false;
  let keychainError: string | undefined;
  const deleted: string[] = [];
  const kc = await Promise.all(labels.map((l) => source.keychain.delete(keyAccount(provider, l)).catch((e: unknown) => { keychainError = (e as Error).message; return false; })));
  labels.forEach((l, i) => {
    const file = store.deleteInsecureSecret(dir, keyAccount(provider, l));
    if (kc[i]) fromKeychain = true;
    if (file) fromFile = true;
    if (kc[i] || file) deleted.push(l);
  });
  removePoolLabel(dir, provider, label);
  return { fromKeychain, fromFile, labels: deleted, ...(keychainError ? { keychainError } : {}) };
}

async function removeProvider(provider: ProviderId): Promise<void> {
  const dir = cliStateDir();
  const d = descriptor(provider);
  if (d.source === 'configured') {
    const { removeProviderConfig } = await import('../../daemon/store/config.js');
    await removeProviderConfig(dir, d.id);
    const r = d.auth ? await deleteStoredKey(d.id) : { fromKeychain: false, fromFile: false };
    const where = [r.fromKeychain && 'the keychain', r.fromFile && 'the insecure file'].filter(Boolean).join(' and ');
    out(`Removed the ${d.id} provider${where ? ` and its key from ${where}` : ''}.`);
    if ('keychainError' in r && r.keychainError) note(`warning: the keychain could not be checked for its key (${r.keychainError})`);
    if (d.auth && process.env[d.keyEnv]) note(`note: ${d.keyEnv} is still set in this environment`);
    await reloadAndReport(dir);
    return;
  }
  const { fromKeychain, fromFile, keychainError, labels } = await deleteStoredKey(provider);
  const envName = d.keyEnv;
  if (!fromKeychain && !fromFile) {
    if (keychainError) throw new CliError(`could not remove the ${provider} key: ${keychainError}`);
    if (process.env[envName]) throw new CliError(`the ${provider} key comes from ${envName} in the environment; nothing is stored to remove (unset ${envName})`);
    throw new CliError(`no ${provider} key is stored (see: ${gatewayCmd('providers list')})`);
  }
  const what = labels.length === 1 && labels[0] === DEFAULT_LABEL ? 'key' : `keys (${labels.join(', ')})`;
  out(`Removed the ${provider} ${what} from ${[fromKeychain && 'the keychain', fromFile && 'the insecure file'].filter(Boolean).join(' and ')}.`);
  if (keychainError) note(`warning: the keychain could not be checked (${keychainError})`);
  if (process.env[envName]) note(`note: ${envName} is still set in this environment and provides a ${provider} key`);
  await reloadAndReport(dir);
}

function listPresets(opts: { json?: boolean }): void {
  if (opts.json) { printJson(PRESETS); return; }
  const lines = [['PRESET', 'PROTOCOL', 'BASE URL', 'KEY', 'PROFILE']];
  for (const p of PRESETS) {
    lines.push([p.id, p.protocol, p.baseUrl, p.noKey ? 'none (local)' : p.vendorKeyEnv ? `yes (${p.vendorKeyEnv} in its docs)` : 'yes', p.quirks ?? '-']);
  }
  for (const l of table(lines)) out(l);
  out('');
  out(`Add one: ${gatewayCmd('providers add <name> --preset <preset>')}`);
}
