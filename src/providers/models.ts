// Model name → provider: user aliases first, then an explicit `provider/` prefix, then the
// well-known families (provider-reference §5.1). Anything else is refused with the accepted forms.
import { TranslationError, type ProviderId } from './types.js';

export interface ResolvedModel {
  provider: ProviderId;
  /** The id sent upstream (prefix stripped). */
  model: string;
  /** The alias the client used, if any. */
  alias?: string;
}

const PREFIXES: Record<string, ProviderId> = { anthropic: 'anthropic', openai: 'openai', gemini: 'gemini', google: 'gemini' };

/** The family a bare model id belongs to, or undefined. */
export function familyOf(id: string): ProviderId | undefined {
  if (id.startsWith('claude-')) return 'anthropic';
  if (/^(gpt-|chatgpt-|codex-)/.test(id) || /^o\d(-|$)/.test(id) || id === 'computer-use-preview') return 'openai';
  if (/^(gemini-|gemma-)/.test(id)) return 'gemini';
  return undefined;
}

function byPrefixOrFamily(name: string): ResolvedModel | undefined {
  const slash = name.indexOf('/');
  if (slash > 0) {
    const provider = PREFIXES[name.slice(0, slash).toLowerCase()];
    if (!provider) return undefined;
    let model = name.slice(slash + 1);
    if (provider === 'gemini') model = model.replace(/^models\//, '');
    return model ? { provider, model } : undefined;
  }
  const bare = name.replace(/^models\//, '');
  const provider = familyOf(bare);
  return provider ? { provider, model: provider === 'gemini' ? bare : name } : undefined;
}

export function resolveModel(name: string, aliases: Record<string, string> = {}): ResolvedModel {
  const target = Object.hasOwn(aliases, name) ? aliases[name] : undefined;
  if (target !== undefined) {
    const r = byPrefixOrFamily(target);
    if (r) return { ...r, alias: name };
    throw new TranslationError(`alias "${name}" points to "${target}", which names no provider; fix it with: gateway models alias ${name} <provider>/<model>`, 'model', 'model_not_found');
  }
  const r = byPrefixOrFamily(name);
  if (r) return r;
  throw new TranslationError(
    `model "${name}" does not name a provider. Use "anthropic/<model>", "openai/<model>" or "gemini/<model>", ` +
    `a well-known name (claude-…, gpt-…, o1/o3/o4…, chatgpt-…, gemini-…), or an alias (gateway models alias <name> <provider>/<model>)`,
    'model', 'model_not_found',
  );
}
