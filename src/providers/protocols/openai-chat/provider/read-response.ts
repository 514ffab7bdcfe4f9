// A chat.completion (JSON) → the IR answer. Lenient: a missing optional field is empty, never an
// exception. `reasoning_content` (DeepSeek, vLLM and our own Chat door) is read as reasoning.
import type { Target } from '../../../ir/protocol.js';
import type { AssistantPart, Choice, Response } from '../../../ir/types.js';
import { asArray, asNumber, asRecord, asString } from '../../../shared/lenient-json.js';
import { fromChatUsage, fromFinishReason } from './wire.js';

export function readChatResponse(body: unknown, _target: Target): Response {
  const o = asRecord(body);
  const choices: Choice[] = asArray(o.choices).map((raw, i) => {
    const c = asRecord(raw);
    const m = asRecord(c.message);
    const parts: AssistantPart[] = [];
    const reasoning = asString(m.reasoning_content) ?? asString(m.reasoning);
    if (reasoning) parts.push({ type: 'reasoning', text: reasoning });
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
