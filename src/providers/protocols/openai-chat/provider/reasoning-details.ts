// OpenRouter's `reasoning_details` (openrouter.ai/docs/guides/best-practices/reasoning-tokens,
// "reasoning_details array structure"): typed blocks `reasoning.text` {text, signature},
// `reasoning.summary` {summary} and `reasoning.encrypted` {data}, each with `index`, `format`, `id`.
// They are opaque state the provider wants back unmodified, so the whole array rides in a reasoning
// part's ProviderState (tagged with the provider) and the builder sends it back to that provider
// alone. A stream sends them in fragments: those sharing `type` and `index` are one block, their
// text concatenated (sending fragments back as separate blocks is refused).
import type { ProviderState } from '../../../ir/types.js';
import { isRecord, type JsonRecord } from '../../../shared/lenient-json.js';

/** The key of the array (as JSON text) in a reasoning part's state data. */
export const REASONING_DETAILS_KEY = 'reasoningDetails';

const CONCATENATED = new Set(['text', 'summary', 'data']);

/** Adds a stream's fragments to the blocks so far (in place): same type and index extend a block, else a new one. */
export function mergeReasoningDetails(blocks: JsonRecord[], fragments: unknown): void {
  if (!Array.isArray(fragments)) return;
  for (const f of fragments) {
    if (!isRecord(f)) continue;
    const same = f.index === undefined ? undefined : blocks.find((b) => b.type === f.type && b.index === f.index);
    if (same === undefined) { blocks.push({ ...f }); continue; }
    for (const [k, v] of Object.entries(f)) {
      if (v === null || v === undefined) continue;
      const had = same[k];
      same[k] = CONCATENATED.has(k) && typeof v === 'string' && typeof had === 'string' ? had + v : v;
    }
  }
}

/** The readable reasoning the blocks carry (texts and summaries), for a server that sends no plain `reasoning` beside them. */
export function reasoningDetailsText(blocks: readonly unknown[]): string {
  let text = '';
  for (const b of blocks) {
    if (!isRecord(b)) continue;
    if (b.type === 'reasoning.text' && typeof b.text === 'string') text += b.text;
    else if (b.type === 'reasoning.summary' && typeof b.summary === 'string') text += b.summary;
  }
  return text;
}

export function reasoningDetailsState(provider: string, blocks: readonly unknown[]): ProviderState {
  return { provider, data: { [REASONING_DETAILS_KEY]: JSON.stringify(blocks) } };
}
