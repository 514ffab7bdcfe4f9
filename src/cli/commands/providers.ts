// `gateway providers set|list|remove`: the real provider keys, kept in the OS keychain (or, only
// when asked, in a 0600 file). A key is never printed: at most its last four characters.
import { Argument, type Command } from 'commander';
import type { ProviderId } from '../../providers/types.js';
import { BUILTIN_PROVIDERS, provider as descriptor } from '../../providers/registry.js';
import { CliError, cliStateDir, note, out, printJson, table, providerChoices } from '../common.js';
import { cleanSecretInput, lastFour, promptHidden, readStdin } from '../prompt.js';
import { reloadAndReport } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';

const ORIGIN_LABEL = { environment: 'environment', keychain: 'keychain', 'insecure-file': 'insecure file' } as const;

function providerArg(): Argument {
  return new Argument('<provider>', providerChoices().join(', ')).choices(providerChoices());
}

export function registerProviders(program: Command): void {
  const cmd = program.command('providers').description('store, list and remove the real provider API keys (kept in the OS keychain)');

  cmd.command('set')
    .description('store a provider API key in the OS keychain (read from a hidden prompt, or from stdin with --stdin)')
    .addArgument(providerArg())
    .option('--stdin', `read the key from stdin instead of prompting (e.g. printenv KEY | ${gatewayCmd('providers set openai --stdin')})`)
    .option('--insecure-storage', `store the key in a plain 0600 file (insecure-secrets.json in the state directory) instead of the keychain; for machines without a usable keychain`)
    .addHelpText('after', `\nThe environment variables ${BUILTIN_PROVIDERS.map((p) => p.keyEnv).join(', ')} override stored keys.\nA running gateway reloads its keys at once.`)
    .action((provider: ProviderId, opts: { stdin?: boolean; insecureStorage?: boolean }) => setProvider(provider, opts));

  cmd.command('list')
    .description('show which providers have a key and where it comes from (environment, keychain or insecure file); never the key')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => listProviders(opts));

  cmd.command('remove')
    .description('delete a stored provider key from the keychain and the insecure file')
    .addArgument(providerArg())
    .action((provider: ProviderId) => removeProvider(provider));
}

async function openSource() {
  const { createSecretSource } = await import('../../daemon/store/secret-source.js');
  return createSecretSource({ dir: cliStateDir(), env: process.env });
}

async function setProvider(provider: ProviderId, opts: { stdin?: boolean; insecureStorage?: boolean }): Promise<void> {
  const raw = opts.stdin ? await readStdin() : await promptHidden(`${provider} API key (input hidden): `);
  const key = cleanSecretInput(raw, `${provider} API key`);
  if (key.startsWith('sk-proxy-')) throw new CliError('that is a gateway proxy key (sk-proxy-…), not a provider key; give the key from the provider\'s console');
  const { keyPrefix, displayName } = descriptor(provider);
  if (!key.startsWith(keyPrefix)) note(`note: ${displayName} keys usually start with "${keyPrefix}"; storing it anyway`);

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
    out(`Stored the ${provider} key (${lastFour(key)}) in the insecure file.`);
  } else {
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
    out(`Stored the ${provider} key (${lastFour(key)}) in ${backendName}.`);
  }
  if (process.env[descriptor(provider).keyEnv]) note(`note: ${descriptor(provider).keyEnv} is set in this environment and overrides the stored key`);
  await reloadAndReport(dir);
}


async function listProviders(opts: { json?: boolean }): Promise<void> {
  const source = await openSource();
  const lookups = await Promise.all(providerChoices().map((p) => source.inspect(p)));
  let backend: { id: string; name: string; survivesReboot: boolean; available: boolean; error?: string };
  // The lookups above already asked the keychain; don't wait for a hung one twice.
  const failed = lookups.find((l) => l.keychainError)?.keychainError;
  try {
    if (failed) throw new Error(failed);
    const b = await source.keychain.backend();
    backend = { ...b, available: true };
  } catch (e) {
    backend = { id: 'none', name: 'none', survivesReboot: false, available: false, error: (e as Error).message };
  }
  const rows = lookups.map((l) => ({
    provider: l.provider,
    configured: Boolean(l.secret),
    origin: l.secret?.origin ?? null,
    last4: l.secret ? lastFour(l.secret.key).slice(1) || null : null,
    envVar: descriptor(l.provider).keyEnv,
    shadowed: l.shadowed,
  }));
  if (opts.json) {
    printJson({ keychain: backend, providers: rows });
    return;
  }
  const lines = [['PROVIDER', 'STATUS', 'ORIGIN', 'KEY', 'NOTE']];
  for (const r of rows) {
    const noteText = [
      r.origin === 'environment' ? `from ${r.envVar}` : '',
      r.shadowed.length ? `overrides ${r.shadowed.map((o) => ORIGIN_LABEL[o]).join(', ')}` : '',
      r.configured ? '' : `set it: ${gatewayCmd(`providers set ${r.provider}`)}`,
    ].filter(Boolean).join('; ');
    lines.push([r.provider, r.configured ? 'configured' : 'not set', r.origin ? ORIGIN_LABEL[r.origin] : '-', r.last4 ? `…${r.last4}` : '-', noteText]);
  }
  for (const l of table(lines)) out(l);
  out('');
  if (backend.available) {
    out(`Keychain: ${backend.name}${backend.survivesReboot ? '' : ' (does not survive a reboot)'}`);
  } else {
    out(`Keychain: none usable (${backend.error})`);
  }
}

async function removeProvider(provider: ProviderId): Promise<void> {
  const dir = cliStateDir();
  const store = await import('../../daemon/store/secret-source.js');
  const source = await openSource();
  let fromKeychain = false;
  let keychainError: string | undefined;
  try {
    fromKeychain = await source.keychain.delete(provider);
  } catch (e) {
    keychainError = (e as Error).message;
  }
  const fromFile = store.deleteInsecureSecret(dir, provider);
  const envName = descriptor(provider).keyEnv;
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
