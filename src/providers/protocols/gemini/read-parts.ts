// Reading Gemini candidates leniently into IR parts, shared by the answer and the stream readers
// (provider-reference.md §3.3, §3.4). A call's Gemini id and thoughtSignature become this
// provider's state on it (the id is given back only to Gemini; another provider's ids never are);
// a signature on text or on a thought is kept the same way. Empty text without a signature and
// unknown part types (executableCode, inlineData…) are skipped.
import type { ProviderState, TokenLogprob } from '../../ir/types.js';
import { asArray, asNumber, asRecord, asString, isRecord } from '../../shared/lenient-json.js';

export type PartView =
  | { kind: 'text'; text: string; state?: ProviderState }
  | { kind: 'thought'; text: string; state?: ProviderState }
  | { kind: 'call'; id: string; name: string; arguments: string; state: ProviderState };

export function readParts(candidate: Record<string, unknown>, provider: string): PartView[] {
  const views: PartView[] = [];
  for (const raw of asArray(asRecord(candidate.content).parts)) {
    const part = asRecord(raw);
    const signature = asString(part.thoughtSignature);
    const call = asRecord(part.functionCall);
    const name = asString(call.name);
    if (name !== undefined && name !== '') {
      const id = asString(call.id);
      const data: Record<string, string> = {};
      if (id !== undefined && id !== '') data.id = id;
      if (signature !== undefined && signature !== '') data.thoughtSignature = signature;
      views.push({ kind: 'call', id: data.id ?? '', name, arguments: JSON.stringify(call.args ?? {}), state: { provider, data } });
      continue;
    }
    const text = asString(part.text);
    if (text === undefined) continue;
    const signed = signature !== undefined && signature !== '';
    if (text === '' && !signed) continue;
    const view: PartView = { kind: part.thought === true ? 'thought' : 'text', text };
    if (signed) view.state = { provider, data: { thoughtSignature: signature } };
    views.push(view);
  }
  return views;
}

/**
 * The text of a candidate whose content is one plain text part (the usual stream fragment), read
 * without building views; anything else is `undefined` and goes through readParts.
 */
export function onlyText(candidate: Record<string, unknown>): string | undefined {
  const content = candidate.content;
  const parts = isRecord(content) ? content.parts : undefined;
  if (!Array.isArray(parts) || parts.length !== 1) return undefined;
  const part: unknown = parts[0];
  if (!isRecord(part) || part.functionCall !== undefined || part.thought !== undefined || part.thoughtSignature !== undefined) return undefined;
  return typeof part.text === 'string' && part.text !== '' ? part.text : undefined;
}

/** `candidate.logprobsResult` → IR log probabilities; `undefined` when it holds none. */
export function readLogprobs(logprobsResult: unknown): TokenLogprob[] | undefined {
  const result = asRecord(logprobsResult);
  const chosen = asArray(result.chosenCandidates);
  if (chosen.length === 0) return undefined;
  const top = asArray(result.topCandidates);
  return chosen.map((c, i) => ({ ...token(c), top: asArray(asRecord(top[i]).candidates).map(token) }));
}

function token(value: unknown): { token: string; logprob: number } {
  const c = asRecord(value);
  return { token: asString(c.token) ?? '', logprob: asNumber(c.logProbability) ?? 0 };
}

/** True when Gemini refused the prompt itself (`promptFeedback.blockReason`, no candidates). */
export function isPromptBlocked(response: Record<string, unknown>): boolean {
  return asString(asRecord(response.promptFeedback).blockReason) !== undefined;
}

/** Gemini may prefix its model version with `models/`. */
export function modelVersionId(name: string): string {
  return name.replace(/^models\//, '');
}

export function modelVersion(response: Record<string, unknown>): string | undefined {
  const name = asString(response.modelVersion);
  return name === undefined ? undefined : modelVersionId(name);
}
