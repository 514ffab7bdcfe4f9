// Gemini's answer vocabulary → the IR's: candidates' parts, finish reasons, usage (provider-reference.md
// §3.3–3.4, §4.6–4.7). A call Gemini sent without an id gets one made up here, marked in its state
// so that the id is not sent back (Gemini pairs such calls with their results by position).
import type { AssistantPart, FinishReason, ProviderState, Usage } from '../../../ir/types.js';
import { asNumber, isRecord } from '../../../shared/lenient-json.js';
import { readCandidateParts } from '../../../gemini/parts.js';
import { CONTENT_FILTER_REASONS } from '../../../gemini/finish-reason.js';
import { MINTED_ID } from './build-request.js';


/** A tool call ends with STOP (Gemini has no tool-specific reason): any call makes it `tool-calls`. */
export function fromFinishReason(reason: string | undefined, hasCalls: boolean): FinishReason {
  if (hasCalls) return 'tool-calls';
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason !== undefined && CONTENT_FILTER_REASONS.has(reason)) return 'content-filter';
  return 'stop';
}

/** Thoughts count apart from candidates at Gemini; the IR's output includes them. */
export function fromUsageMetadata(u: unknown): Usage | undefined {
  if (!isRecord(u)) return undefined;
  const n = (k: string) => asNumber(u[k]) ?? 0;
  const thoughts = n('thoughtsTokenCount');
  const usage: Usage = { inputTokens: n('promptTokenCount') + n('toolUsePromptTokenCount'), outputTokens: n('candidatesTokenCount') + thoughts };
  if (n('cachedContentTokenCount')) usage.cachedInputTokens = n('cachedContentTokenCount');
  if (thoughts) usage.reasoningTokens = thoughts;
  return usage;
}

/** The parts of one candidate as IR parts; `nextCall` numbers the calls that need a made-up id. */
export function candidateParts(candidate: unknown, provider: string, idBase: string, nextCall: () => number): AssistantPart[] {
  const parts: AssistantPart[] = [];
  for (const v of readCandidateParts(candidate)) {
    if (v.kind === 'text') parts.push({ type: 'text', text: v.text });
    else if (v.kind === 'thought') parts.push({ type: 'reasoning', text: v.text });
    else {
      const data: Record<string, string> = {};
      if (v.thoughtSignature) data.thoughtSignature = v.thoughtSignature;
      const id = v.id ?? `call_${idBase}_${nextCall()}`;
      if (v.id === undefined) data[MINTED_ID] = '1';
      const state: ProviderState | undefined = Object.keys(data).length > 0 ? { provider, data } : undefined;
      parts.push({ type: 'tool-call', id, name: v.name, arguments: JSON.stringify(v.args ?? {}), ...(state ? { state } : {}) });
    }
  }
  return parts;
}
