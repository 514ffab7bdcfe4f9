// A Chat Completions body made acceptable to a server with a quirk profile (quirks.ts). It works
// on the wire body, so the same function serves the translated path (build-request.ts, after the
// IR is built) and the Chat door's fast path (daemon/doors/chat.ts, on the client's own body):
// one place per quirk. What it cannot send it refuses with a TranslationError naming the field.
// The input is never modified; untouched parts are shared with the result.
import { createHash } from 'node:crypto';
import type { QuirkProfile, RejectedField } from '../../../quirks.js';
import { TranslationError } from '../../../types.js';

type Json = Record<string, unknown>;

const ID9 = /^[a-zA-Z0-9]{9}$/;
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A tool-call id of exactly 9 alphanumerics (Mistral's rule): one that already fits is kept (the
 * server's own ids go back untouched), any other is replaced by 9 characters of its SHA-256, the
 * same for the same id every time. So a stateless client that resends its history sends the same
 * ids again, a call and its result still pair, and the client's own ids are never changed in what
 * it holds: only the copy going up is rewritten. (New calls in answers carry the server's fresh
 * ids, which fit, so nothing coming down needs mapping back.)
 */
export function toolCallId9(id: string): string {
  if (ID9.test(id)) return id;
  const digest = createHash('sha256').update(id, 'utf8').digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += ALPHANUMERIC[digest[i]! % ALPHANUMERIC.length];
  return out;
}

const MESSAGE_FIELD = 'messages[].';

export function applyChatQuirks(body: Json, q: QuirkProfile, model: string, provider: string): Json {
  let out = body;
  const edit = (): Json => (out === body ? (out = { ...body }) : out);

  // Some servers refuse stream_options (Mistral reports usage in its last chunk unasked).
  if (!q.streamUsage && out.stream_options !== undefined) delete edit().stream_options;

  if (q.maxTokensField === 'max_tokens' && out.max_completion_tokens !== undefined) {
    const cap = out.max_completion_tokens;
    const o = edit();
    delete o.max_completion_tokens;
    if (cap !== null) o.max_tokens = cap;
  }

  const messageRules: RejectedField[] = [];
  for (const rule of q.rejectedFields) {
    if (rule.models !== undefined && !rule.models.test(model)) continue;
    if (rule.field.startsWith(MESSAGE_FIELD)) { messageRules.push(rule); continue; }
    const value = out[rule.field];
    if (value === undefined) continue;
    if (value !== null && rule.action === 'refuse' && rule.harmless?.(value) !== true) throw refusal(provider, model, rule, rule.field);
    delete edit()[rule.field];
  }

  if (Array.isArray(out.messages) && (messageRules.length > 0 || q.systemAsString || q.toolCallIds9 || needsReasoningField(q))) {
    const messages = out.messages as unknown[];
    const fixed = messages.map((m, i) => fixMessage(m, i, q, messageRules, provider, model));
    if (fixed.some((m, i) => m !== messages[i])) edit().messages = fixed;
  }
  return out;
}

/** The profile wants `reasoning_content` on every assistant turn with tool calls (DeepSeek's thinking mode). */
function needsReasoningField(q: QuirkProfile): boolean {
  return q.reasoningBack === 'tool-turns' && !q.reasoningDetails;
}

function refusal(provider: string, model: string, rule: RejectedField, param: string): TranslationError {
  const which = rule.models !== undefined ? `${provider}'s ${model}` : provider;
  return new TranslationError(`${which} does not accept ${rule.what}; remove \`${param}\` from the request.`, param);
}

function fixMessage(raw: unknown, i: number, q: QuirkProfile, rules: readonly RejectedField[], provider: string, model: string): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  const m = raw as Json;
  let out = m;
  const edit = (): Json => (out === m ? (out = { ...m }) : out);

  for (const rule of rules) {
    const field = rule.field.slice(MESSAGE_FIELD.length);
    const value = out[field];
    if (value === undefined) continue;
    if (value !== null && rule.action === 'refuse' && rule.harmless?.(value) !== true) throw refusal(provider, model, rule, `messages[${i}].${field}`);
    delete edit()[field];
  }
  if (q.systemAsString && (m.role === 'system' || m.role === 'developer') && Array.isArray(m.content)) {
    // Text parts joined as the builder joins system parts (build-request.ts).
    edit().content = (m.content as unknown[]).map((p) => (typeof p === 'object' && p !== null && typeof (p as Json).text === 'string' ? (p as Json).text as string : '')).join('\n\n');
  }
  // A client that dropped the reasoning of a tool turn (many Chat clients keep only content and
  // tool_calls) would get DeepSeek's 400; an empty reasoning_content is accepted in its place
  // (deepseek-ai/deepseek-harness#739: the 400 comes from the field missing, not from it being empty).
  if (needsReasoningField(q) && m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0 && typeof m.reasoning_content !== 'string') {
    edit().reasoning_content = '';
  }
  if (q.toolCallIds9) {
    if (typeof m.tool_call_id === 'string' && !ID9.test(m.tool_call_id)) edit().tool_call_id = toolCallId9(m.tool_call_id);
    if (Array.isArray(m.tool_calls) && m.tool_calls.some((c: unknown) => typeof (c as Json | null)?.id === 'string' && !ID9.test((c as Json).id as string))) {
      edit().tool_calls = (m.tool_calls as unknown[]).map((c) => {
        const call = c as Json | null;
        return call !== null && typeof call.id === 'string' ? { ...call, id: toolCallId9(call.id) } : c;
      });
    }
  }
  return out;
}
