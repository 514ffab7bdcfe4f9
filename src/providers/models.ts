// Model name → provider: user aliases first, then an explicit `provider/` prefix, then the
// well-known families (provider-reference §5.1). Anything else is refused with the accepted forms.
import { TranslationError, type ProviderId } from './types.js';
import { BUILTIN_PROVIDERS, providerForFamily, providerIds, splitProviderPrefix } from './registry.js';
import { PROTOCOL_FACTS } from './protocol-facts.js';

export interface ResolvedModel {
  provider: ProviderId;
  /** The id sent upstream (prefix stripped). */
  model: string;
  /** The alias the client used, if any. */
  alias?: string;
}

/** The provider whose family a bare model id belongs to, or undefined. */
export function familyOf(id: string): ProviderId | undefined {
  return providerForFamily(id)?.id;
}

/** Gemini's protocol names models `models/<id>`; the id is what routes. */
function modelId(protocolPathModel: boolean, id: string): string {
  return protocolPathModel ? id.replace(/^models\//, '') : id;
}

function byPrefixOrFamily(name: string): ResolvedModel | undefined {
  if (name.indexOf('/') > 0) {
    const split = splitProviderPrefix(name);
    if (!split) return undefined;
    const model = modelId(PROTOCOL_FACTS[split.provider.protocol].modelIn === 'path', split.rest);
    return model ? { provider: split.provider.id, model } : undefined;
  }
  const bare = name.replace(/^models\//, '');
  const p = providerForFamily(bare);
  return p ? { provider: p.id, model: modelId(PROTOCOL_FACTS[p.protocol].modelIn === 'path', name) } : undefined;
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
    `model "${name}" does not name a provider. Use ${providerIds().map((p) => `"${p}/<model>"`).join(', ')}, ` +
    `a well-known name (${BUILTIN_PROVIDERS.map((p) => p.familyHint).join(', ')}), or an alias (gateway models alias <name> <provider>/<model>)`,
    'model', 'model_not_found',
  );
}
