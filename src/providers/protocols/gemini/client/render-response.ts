// IR answer → a Gemini `GenerateContentResponse` (provider-reference.md §3.4). Reasoning becomes
// `thought: true` parts; function calls are whole parts with their arguments as an object;
// opaque provider state rides in the next kept part's `thoughtSignature` (carry.ts). A tool call
// ends with STOP, as Gemini's own do; candidates' token count leaves the thoughts out.
import type { RenderContext } from '../../../ir/protocol.js';
import type { AssistantPart, Choice, Response, TokenLogprob } from '../../../ir/types.js';
import { toGeminiFinishReason } from '../finish-reason.js';
import { toGeminiUsage } from '../usage.js';
import { Carry } from './carry.js';

export type OutPart = Record<string, unknown>;

/** A function call's arguments as the object Gemini sends (an unreadable or non-object value gives `{}`). */
export function callArgs(json: string): unknown {
  try {
    const v: unknown = json === '' ? {} : JSON.parse(json);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** The function-call part for a call (the id only when the provider gave one). */
export function callPart(id: string, name: string, args: string, signature: string | undefined): OutPart {
  const part: OutPart = { functionCall: id === '' ? { name, args: callArgs(args) } : { id, name, args: callArgs(args) } };
  if (signature !== undefined) part.thoughtSignature = signature;
  return part;
}

export function renderParts(parts: readonly AssistantPart[]): OutPart[] {
  const out: OutPart[] = [];
  const carry = new Carry();
  for (const part of parts) {
    switch (part.type) {
      case 'reasoning':
        if (part.text !== '') out.push({ text: part.text, thought: true });
        carry.reasoning(part);
        break;
      case 'text': {
        if (part.text === '' && part.state === undefined) break; // Gemini clients reject empty text parts
        const signature = carry.take(part.state);
        out.push(signature === undefined ? { text: part.text } : { text: part.text, thoughtSignature: signature });
        break;
      }
      case 'tool-call':
        out.push(callPart(part.id, part.name, part.arguments, carry.take(part.state)));
        break;
      default: { const never: never = part; return never; }
    }
  }
  // Reasoning left at the end rides on an empty thought of its own.
  const rest = carry.take(undefined);
  if (rest !== undefined) out.push({ text: '', thought: true, thoughtSignature: rest });
  return out;
}

/** IR log probabilities → `logprobsResult`. */
export function logprobsResult(logprobs: readonly TokenLogprob[]): Record<string, unknown> {
  return {
    chosenCandidates: logprobs.map((t) => ({ token: t.token, logProbability: t.logprob })),
    topCandidates: logprobs.map((t) => ({ candidates: (t.top ?? []).map((c) => ({ token: c.token, logProbability: c.logprob })) })),
  };
}

function candidate(choice: Choice): Record<string, unknown> {
  const c: Record<string, unknown> = {
    content: { parts: renderParts(choice.parts), role: 'model' },
    finishReason: toGeminiFinishReason(choice.finish),
    index: choice.index,
  };
  if (choice.refusal !== undefined) c.finishMessage = choice.refusal;
  if (choice.logprobs !== undefined) c.logprobsResult = logprobsResult(choice.logprobs);
  return c;
}

export function renderGenerateContentResponse(response: Response, ctx: RenderContext): Record<string, unknown> {
  const candidates = response.choices.length > 0 ? response.choices.map(candidate) : [candidate({ index: 0, parts: [], finish: 'stop' })];
  return {
    candidates,
    usageMetadata: toGeminiUsage(response.usage),
    modelVersion: ctx.model,
    responseId: response.id ?? ctx.fallbackId,
  };
}
