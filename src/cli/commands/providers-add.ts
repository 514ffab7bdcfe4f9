// `gateway providers add <name>`: a provider from a preset or from --protocol/--base-url, stored in
// config.json (never its key: that goes to the keychain under the provider's name, as `providers
// set` stores it). A name that exists is updated. The running gateway picks it up at once.
import { findPreset } from '../../providers/presets.js';
import { keyEnvFor, parseHeaderPairs, parseModelList, validateProviderName, validateStoredProvider, type StoredProvider } from '../../providers/configured.js';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { upstreamPath } from '../../providers/registry.js';
import { CliError, cliStateDir, note, out } from '../common.js';
import { lastFour } from '../prompt.js';
import { reloadAndReport } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';
import { readProviderKey, storeProviderKey, type AddOptions } from './providers.js';

/** The entry to store, from the preset and the flags (flags win); throws CliError saying what is missing or wrong. */
export async function storedFromOptions(name: string, opts: AddOptions): Promise<StoredProvider> {
  const { presetBaseUrl } = await import('../../providers/presets.js');
  const preset = opts.preset ? findPreset(opts.preset) : undefined;
  if (opts.preset && !preset) throw new CliError(`no preset "${opts.preset}" (see: ${gatewayCmd('providers presets')})`);
  if (!preset && (!opts.protocol || !opts.baseUrl)) {
    throw new CliError(`give --preset <preset>, or both --protocol and --base-url (e.g. ${gatewayCmd(`providers add ${name} --protocol openai-chat --base-url http://localhost:8000/v1`)})`);
  }
  if (opts.key === false && opts.stdin) throw new CliError('--no-key takes no key: drop --stdin');
  try {
    const raw: Record<string, unknown> = {
      protocol: opts.protocol ?? preset!.protocol,
      baseUrl: opts.baseUrl ?? presetBaseUrl(preset!, { ...(opts.resource ? { resource: opts.resource } : {}) }),
      ...(preset ? { preset: preset.id, displayName: preset.displayName } : {}),
      ...(preset?.auth ? { auth: preset.auth } : {}),
      ...(preset?.modelsPath ? { modelsPath: preset.modelsPath } : {}),
    };
    // A preset's protocol-specific settings do not carry over to another protocol.
    if (opts.protocol && preset && opts.protocol !== preset.protocol) { delete raw.auth; delete raw.modelsPath; }
    const noKey = opts.key === false || (opts.key !== true && preset?.noKey === true);
    if (noKey) raw.noKey = true;
    const quirks = opts.quirks ?? preset?.quirks;
    if (quirks) raw.quirks = quirks;
    if (opts.header?.length) raw.headers = parseHeaderPairs(opts.header);
    if (opts.models !== undefined) raw.models = parseModelList(opts.models);
    return validateStoredProvider(name, raw);
  } catch (e) {
    throw e instanceof CliError ? e : new CliError((e as Error).message);
  }
}

export async function addProvider(name: string, opts: AddOptions): Promise<void> {
  try { validateProviderName(name); } catch (e) { throw new CliError((e as Error).message); }
  const stored = await storedFromOptions(name, opts);
  const dir = cliStateDir();
  const envVar = keyEnvFor(name);

  // The key first: a provider that cannot get its key is not added half-way.
  let keyLine = 'takes no key: no credential is ever sent to it';
  if (!stored.noKey) {
    if (process.env[envVar] && !opts.stdin) {
      keyLine = `key from ${envVar} (set in this environment; nothing stored)`;
    } else {
      const key = await readProviderKey(name, opts);
      const where = await storeProviderKey(name, key, opts);
      keyLine = `key (${lastFour(key)}) stored in ${where}`;
      if (process.env[envVar]) note(`note: ${envVar} is set in this environment and overrides the stored key`);
    }
  }
  const { setProviderConfig } = await import('../../daemon/store/config.js');
  const replaced = await setProviderConfig(dir, name, stored);
  const chatPath = upstreamPath({ basePath: new URL(stored.baseUrl).pathname.replace(/\/+$/, ''), protocol: stored.protocol }, PROTOCOL_FACTS[stored.protocol].mainPath);
  out(`${replaced ? 'Updated' : 'Added'} provider ${name}: ${stored.protocol} at ${stored.baseUrl}; ${keyLine}.`);
  out(`Use its models as ${name}/<model> on every door; its own API is under /${name}/… (e.g. /${name}${PROTOCOL_FACTS[stored.protocol].mainPath} → ${new URL(stored.baseUrl).origin}${chatPath}).`);
  const preset = stored.preset ? findPreset(stored.preset) : undefined;
  if (preset?.note) note(`note: ${preset.note}`);
  note(`Check it: ${gatewayCmd(`providers test ${name}`)}`);
  await reloadAndReport(dir);
}
