// `gateway providers set|list|remove|add|test|presets`: the providers the gateway reaches and their
// real keys, kept in the OS keychain (or, only when asked, in a 0600 file). A key is never printed:
// at most its last four characters. `add` and `test` live in providers-add.ts and providers-test.ts.
import { Argument, Option, type Command } from 'commander';
import type { ProviderId } from '../../providers/types.js';
import { allProviders, BUILTIN_PROVIDERS, provider as descriptor } from '../../providers/registry.js';
import { PRESETS } from '../../providers/presets.js';
import { PROTOCOL_IDS } from '../../providers/configured.js';
import { CliError, cliStateDir, note, out, printJson, table, providerChoices } from '../common.js';
import { cleanSecretInput, lastFour, promptHidden, readStdin } from '../prompt.js';
import { reloadAndReport } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';

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
    .addHelpText('after', `\nThe environment variables ${BUILTIN_PROVIDERS.map((p) => p.keyEnv).join(', ')} (GATEWAY_<NAME>_API_KEY for an added provider) override stored keys.\nA running gateway reloads its keys at once.`)
    .action((provider: ProviderId, opts: KeyInputOptions) => setProvider(provider, opts));

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

/** Stores a provider key in the keychain (or the insecure file when asked); returns where, for the message. */
export async function storeProviderKey(provider: string, key: string, opts: KeyInputOptions): Promise<string> {
  const dir = cliStateDir();
  const { ensureStateDir } = await import('../../daemon/store/paths.js');
  ensureStateDir(dir);
  const store = await import('../../daemon/store/secret-source.js');
  const source = await openSource();
  const kc = source.keychain;
  if (opts.insecureStorage) {
    const path = store.writeInsecureSecret(dir, provider, key);
    note(`WARNING: the ${provider} key is stored UNENCRYPTED in ${path} (mode 0600).`);
    note('WARNING: any program running as your user can read it. Prefer a keychain where one is available.');
    // A keychain entry would win over the file; drop it so the key just given is the one used.
    await kc.delete(provider).catch(() => false);
    return 'the insecure file';
  }
  let backendName: string;
  try {
    await kc.set(provider, key);
    const backend = await kc.backend(); // known from the call above
    backendName = backend.name;
    if (!backend.survivesReboot) note(`warning: the ${backend.name} does not survive a reboot; you will have to set the key again after one`);
  } catch (e) {
    const { KeychainError } = await import('../../daemon/store/keychain.js');
    if (!(e instanceof KeychainError)) throw e;
    throw new CliError(`cannot store the key in a keychain: ${e.message}. To keep it in a plain 0600 file instead, re-run with --insecure-storage`);
  }
  if (store.deleteInsecureSecret(dir, provider)) note(`removed the old ${provider} key from the insecure file`);
  return backendName;
}

async function setProvider(provider: ProviderId, opts: KeyInputOptions): Promise<void> {
  const d = descriptor(provider);
  if (!d.auth) throw new CliError(`${provider} was added with --no-key: it takes no key (re-add it without --no-key to give it one: ${gatewayCmd(`providers add ${provider} …`)})`);
  const key = await readProviderKey(provider, opts);
  if (d.keyPrefix && !key.startsWith(d.keyPrefix)) note(`note: ${d.displayName} keys usually start with "${d.keyPrefix}"; storing it anyway`);
  const where = await storeProviderKey(provider, key, opts);
  out(`Stored the ${provider} key (${lastFour(key)}) in ${where}.`);
  if (process.env[d.keyEnv]) note(`note: ${d.keyEnv} is set in this environment and overrides the stored key`);
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

/** Deletes a provider's stored key from the keychain and the insecure file; says where it was. */
async function deleteStoredKey(provider: string): Promise<{ fromKeychain: boolean; fromFile: boolean; keychainError?: string }> {
  const store = await import('../../daemon/store/secret-source.js');
  const source = await openSource();
  let fromKeychain = false;
  let keychainError: string | undefined;
  try {
    fromKeychain = await source.keychain.delete(provider);
  } catch (e) {
    keychainError = (e as Error).message;
  }
  const fromFile = store.deleteInsecureSecret(cliStateDir(), provider);
  return { fromKeychain, fromFile, ...(keychainError ? { keychainError } : {}) };
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
  const { fromKeychain, fromFile, keychainError } = await deleteStoredKey(provider);
  const envName = d.keyEnv;
  if (!fromKeychain && !fromFile) {
    if (keychainError) throw new CliError(`could not remove the ${provider} key: ${keychainError}`);
    if (process.env[envName]) throw new CliError(`the ${provider} key comes from ${envName} in the environment; nothing is stored to remove (unset ${envName})`);
    throw new CliError(`no ${provider} key is stored (see: ${gatewayCmd('providers list')})`);
  }
  out(`Removed the ${provider} key from ${[fromKeychain && 'the keychain', fromFile && 'the insecure file'].filter(Boolean).join(' and ')}.`);
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
