// Reading Gemini candidates leniently, shared by the JSON and the streaming translators: which
// parts are answer text, thoughts or function calls, and what the OpenAI tool call looks like.
import type { ToolCall, TranslateContext } from '../types.js';
import { asArray, asRecord, asString } from '../shared/lenient-json.js';
import { encodeGeminiToolCallId } from './tool-call-id.js';

export type GeminiPartView =
  | { kind: 'text'; text: string }
  | { kind: 'thought'; text: string }
  | { kind: 'call'; name: string; args: unknown; id?: string; thoughtSignature?: string };

/**
 * The parts of a candidate we translate, in order. Empty text (Gemini 3 may end a turn with an
 * empty text part that only carries a signature), signatures on text parts, which an OpenAI
 * client cannot return, and unknown part types (executableCode, inlineData, …) are skipped.
 */
export function readCandidateParts(candidate: unknown): GeminiPartView[] {
  const views: GeminiPartView[] = [];
  for (const raw of asArray(asRecord(asRecord(candidate).content).parts)) {
    const part = asRecord(raw);
    const call = asRecord(part.functionCall);
    const name = asString(call.name);
    if (name !== undefined && name !== '') {
      const view: GeminiPartView = { kind: 'call', name, args: call.args };
      const id = asString(call.id);
      const signature = asString(part.thoughtSignature);
      if (id !== undefined && id !== '') view.id = id;
      if (signature !== undefined && signature !== '') view.thoughtSignature = signature;
      views.push(view);
      continue;
    }
    const text = asString(part.text);
    if (text === undefined || text === '') continue;
    views.push({ kind: part.thought === true ? 'thought' : 'text', text });
  }
  return views;
}

/** `callIndex` counts calls across the whole response; it only matters when Gemini sent no id. */
export function toOpenAIToolCall(call: Extract<GeminiPartView, { kind: 'call' }>, ctx: TranslateContext, callIndex: number): ToolCall {
  return {
    id: encodeGeminiToolCallId({ id: call.id, thoughtSignature: call.thoughtSignature, fallbackId: ctx.fallbackId, callIndex }),
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
  };
}

/** `ctx.displayModel`, else `gemini/<modelVersion>` (Gemini may prefix it with `models/`). */
export function responseModel(modelVersion: unknown, ctx: TranslateContext): string {
  if (ctx.displayModel !== undefined) return ctx.displayModel;
  return `gemini/${(asString(modelVersion) ?? ctx.model).replace(/^models\//, '')}`;
}

/** True when Gemini refused the prompt itself (`promptFeedback.blockReason`, no candidates). */
export function isPromptBlocked(response: Record<string, unknown>): boolean {
  return asString(asRecord(response.promptFeedback).blockReason) !== undefined;
}
