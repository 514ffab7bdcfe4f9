// A Responses `response` object (JSON) → the IR answer. Lenient: a missing optional field is
// empty, never an exception; output items of types this code does not know (server tools) are
// skipped. Reasoning summaries are joined into one reasoning part whose state carries the item's
// `encrypted_content` and id, for this provider alone to read on the next turn.
import type { Target } from '../../../ir/protocol.js';
import type { AssistantPart, Choice, ReasoningPart, Response } from '../../../ir/types.js';
import { asArray, asRecord, asString } from '../../../shared/lenient-json.js';
import { fromResponsesUsage } from '../usage.js';
import { finishOf } from '../wire.js';

/** The texts of a reasoning item's `summary` (or, from open-weight servers, its `content`). */
export function reasoningText(item: Record<string, unknown>): string {
  const parts = asArray(item.summary).length > 0 ? asArray(item.summary) : asArray(item.content);
  return parts.map((p) => asString(asRecord(p).text) ?? '').filter((t) => t !== '').join('\n\n');
}

/** The IR state of a reasoning item: its encrypted content and id, or nothing without the former. */
export function reasoningState(item: Record<string, unknown>, target: Target): ReasoningPart['state'] {
  const encryptedContent = asString(item.encrypted_content);
  if (encryptedContent === undefined || encryptedContent === '') return undefined;
  const data: Record<string, string> = { encryptedContent };
  const id = asString(item.id);
  if (id !== undefined) data.id = id;
  return { provider: target.provider, data };
}

export function readResponsesResponse(body: unknown, target: Target): Response {
  const o = asRecord(body);
  const parts: AssistantPart[] = [];
  let refusal = '';
  let calls = false;
  for (const raw of asArray(o.output)) {
    const item = asRecord(raw);
    switch (item.type) {
      case 'message':
        for (const c of asArray(item.content)) {
          const part = asRecord(c);
          if (part.type === 'output_text') {
            const text = asString(part.text);
            if (text) parts.push({ type: 'text', text });
          } else if (part.type === 'refusal') refusal += asString(part.refusal) ?? '';
        }
        break;
      case 'function_call':
        calls = true;
        parts.push({ type: 'tool-call', id: asString(item.call_id) ?? asString(item.id) ?? `call_${parts.length}`, name: asString(item.name) ?? '', arguments: asString(item.arguments) || '{}' });
        break;
      case 'reasoning': {
        const part: ReasoningPart = { type: 'reasoning', text: reasoningText(item) };
        const state = reasoningState(item, target);
        if (state !== undefined) part.state = state;
        if (part.text !== '' || state !== undefined) parts.push(part);
        break;
      }
      default:
        break; // web search, file search and other server-side items: nothing the IR carries
    }
  }
  const choice: Choice = { index: 0, parts, finish: finishOf(o, { calls, refusal: refusal !== '' }) };
  if (refusal !== '') choice.refusal = refusal;
  const response: Response = { choices: [choice] };
  const id = asString(o.id);
  if (id) response.id = id;
  const model = asString(o.model);
  if (model) response.model = model;
  const usage = fromResponsesUsage(o.usage);
  if (usage) response.usage = usage;
  return response;
}
