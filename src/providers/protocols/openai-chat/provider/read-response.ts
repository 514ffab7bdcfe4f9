// A chat.completion (JSON) → the IR answer. Lenient: a missing optional field is empty, never an
// exception. `reasoning_content` (DeepSeek: api-docs.deepseek.com/guides/thinking_mode; our own
// Chat door) and `reasoning` (vLLM: docs.vllm.ai/en/stable/features/reasoning_outputs) are read
// as reasoning; with a profile that says so, `reasoning_details` too (reasoning-details.ts).
import type { Target } from '../../../ir/protocol.js';
import type { AssistantPart, Choice, ReasoningPart, Response } from '../../../ir/types.js';
import { asArray, asNumber, asRecord, asString } from '../../../shared/lenient-json.js';
import { reasoningDetailsState, reasoningDetailsText } from './reasoning-details.js';
import { fromChatUsage } from '../usage.js';
import { fromFinishReason } from './wire.js';

export function readChatResponse(body: unknown, target: Target): Response {
  const withDetails = target.quirks?.reasoningDetails === true;
  const o = asRecord(body);
  const choices: Choice[] = asArray(o.choices).map((raw, i) => {
    const c = asRecord(raw);
    const m = asRecord(c.message);
    const parts: AssistantPart[] = [];
    const details = withDetails ? asArray(m.reasoning_details) : [];
    const reasoning = asString(m.reasoning_content) ?? asString(m.reasoning) ?? reasoningDetailsText(details);
    if (details.length > 0) {
      const part: ReasoningPart = { type: 'reasoning', text: reasoning, state: reasoningDetailsState(target.provider, details) };
      if (reasoning === '') part.redacted = true; // encrypted only: nothing to read, state to give back
      parts.push(part);
    } else if (reasoning) parts.push({ type: 'reasoning', text: reasoning });
    const text = asString(m.content);
    if (text) parts.push({ type: 'text', text });
    for (const rawCall of asArray(m.tool_calls)) {
      const call = asRecord(rawCall);
      const fn = asRecord(call.function);
      parts.push({ type: 'tool-call', id: asString(call.id) ?? `call_${i}_${parts.length}`, name: asString(fn.name) ?? '', arguments: asString(fn.arguments) ?? '{}' });
    }
    const refusal = asString(m.refusal);
    const choice: Choice = { index: asNumber(c.index) ?? i, parts, finish: refusal ? 'refusal' : fromFinishReason(c.finish_reason) };
    if (refusal) choice.refusal = refusal;
    return choice;
  });
  const response: Response = { choices };
  const id = asString(o.id);
  if (id) response.id = id;
  const model = asString(o.model);
  if (model) response.model = model;
  const usage = fromChatUsage(o.usage);
  if (usage) response.usage = usage;
  return response;
}
