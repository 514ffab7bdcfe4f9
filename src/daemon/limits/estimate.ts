// A request's worst case, reserved against its key's limits before it goes upstream: the input's
// estimate plus the output cap the request would get upstream, and those tokens at the model's
// dearest rates. Worst, not likely: spend may never pass a budget, so what a request could cost
// must be held until it settles at what it did cost.
import type { ProtocolId } from '../../providers/ir/protocol.js';
import { findProvider, maxOutputTokens, upstreamProtocol } from '../../providers/registry.js';
import { defaultMaxTokens } from '../../providers/protocols/anthropic/max-tokens.js';
import { CACHE_WRITE_1H_MULTIPLE, CACHE_WRITE_5M_MULTIPLE, findPrice, inPeak, type PriceTable, type TierPrice } from '../observe/usage/prices.js';

/** The most a model whose output cap the gateway does not know is assumed to write. */
export const UNKNOWN_OUTPUT_CAP = 128_000;
/**
 * The input assumed for a request that continues a conversation only its provider holds (OpenAI's
 * `previous_response_id` or `conversation`): the largest context window of the models that keep
 * them (400,000 tokens), since the gateway cannot see how long it has grown.
 */
export const PROVIDER_HELD_INPUT = 400_000;

/** Whether a Responses-protocol body continues a conversation its provider keeps (its size unknown here). */
export function continuesProviderConversation(body: Obj): boolean {
  return (typeof body.previous_response_id === 'string' && body.previous_response_id !== '') || (body.conversation !== undefined && body.conversation !== null);
}

type Obj = Record<string, unknown>;
const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);

/** The output cap a client asked for, in its protocol's own field. */
export function requestedOutputCap(protocol: ProtocolId, body: Obj): number | undefined {
  switch (protocol) {
    case 'openai-chat': return count(body.max_completion_tokens) ?? count(body.max_tokens);
    case 'anthropic': return count(body.max_tokens);
    case 'openai-responses': return count(body.max_output_tokens);
    case 'gemini': {
      const config = body.generationConfig ?? body.generation_config;
      return typeof config === 'object' && config !== null ? count((config as Obj).maxOutputTokens ?? (config as Obj).max_output_tokens) : undefined;
    }
    default: {
      const never: never = protocol;
      return never;
    }
  }
}

/**
 * Input tokens a body can hold at most: its bytes. A token the providers count covers at least one
 * byte of text, and the JSON around the text more than pays for the tokens they add per message
 * and for tools; images count their base64 bytes, far more than their tokens.
 */
export function inputEstimate(bodyBytes: number): number {
  return bodyBytes;
}

/** One target of a request's route, as the estimate needs it. */
export interface EstimateTarget { provider: string; model: string }

export interface WorstCase {
  input: number;
  output: number;
  /** USD; undefined when some target has no price (and is not local). */
  usd: number | undefined;
}

/** The dearest rate an input token can be billed at: at Anthropic, a cache write (a 1-hour one costs twice the input price). */
function dearestInputRate(tier: TierPrice, anthropic: boolean): number {
  const writes = anthropic ? Math.max(tier.cacheWrite ?? tier.input * CACHE_WRITE_5M_MULTIPLE, tier.cacheWrite1h ?? tier.input * CACHE_WRITE_1H_MULTIPLE) : 0;
  return Math.max(tier.input, tier.cachedInput ?? 0, tier.cacheWrite ?? 0, writes);
}

/** The worst case of a request on one target: its output cap there, and that at the target's prices. */
function onTarget(t: EstimateTarget, door: ProtocolId, asked: number | undefined, input: number, prices: PriceTable, at: number): { output: number; usd: number | undefined } {
  const p = findProvider(t.provider);
  const protocol = p ? upstreamProtocol(p, t.model, door) : door;
  const limit = maxOutputTokens(t.provider, t.model);
  const output = asked !== undefined ? Math.min(asked, limit ?? asked)
    : protocol === 'anthropic' ? defaultMaxTokens(t.model)
      : limit ?? UNKNOWN_OUTPUT_CAP;
  if (p?.local) return { output, usd: 0 };
  const found = findPrice(prices, t.provider, t.model);
  if (!found) return { output, usd: undefined };
  const price = found.price;
  const tier: TierPrice = price.longContext && input > price.longContext.above ? price.longContext
    : price.peak && inPeak(price.peak, at) ? price.peak : price;
  const usd = (input * dearestInputRate(tier, protocol === 'anthropic') + output * tier.output) / 1_000_000;
  return { output, usd };
}

/**
 * The worst case over every target the request may be served by (a fallback may cost more than
 * the first). `inputBytes`: the body's, and what it carries by reference that the gateway holds;
 * Infinity when only the provider knows (PROVIDER_HELD_INPUT is assumed then).
 */
export function worstCase(targets: readonly EstimateTarget[], door: ProtocolId, body: Obj, inputBytes: number, prices: PriceTable, at: number): WorstCase {
  const input = Number.isFinite(inputBytes) ? inputEstimate(inputBytes) : PROVIDER_HELD_INPUT;
  const asked = requestedOutputCap(door, body);
  let output = 0;
  let usd: number | undefined = 0;
  for (const t of targets) {
    const w = onTarget(t, door, asked, input, prices, at);
    output = Math.max(output, w.output);
    usd = usd === undefined || w.usd === undefined ? undefined : Math.max(usd, w.usd);
  }
  return { input, output, usd };
}

/** Whether a model can be charged to a budget: it has a price, or its provider is local (free). */
export function isPriced(t: EstimateTarget, prices: PriceTable): boolean {
  return findProvider(t.provider)?.local === true || findPrice(prices, t.provider, t.model) !== undefined;
}
