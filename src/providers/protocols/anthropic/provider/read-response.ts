// An Anthropic `Message` (non-streaming) → the IR answer (provider-reference.md §2.6, §4.5), read
// leniently: a missing field gives an empty value, never an exception. Thinking keeps its
// signature, and redacted thinking its data, as this provider's state for the next turn.
import type { Target } from '../../../ir/protocol.js';
import type { AssistantPart, Choice, Response } from '../../../ir/types.js';
import { asArray, asRecord, asString, isRecord } from '../../../shared/lenient-json.js';
import { fromAnthropicStopReason } from '../stop-reason.js';
import { fromAnthropicUsage } from '../usage.js';

export function readAnthropicResponse(body: unknown, target: Target): Response {
  const msg = asRecord(body);
  const parts: AssistantPart[] = [];
  for (const raw of asArray(msg.content)) {
    const block = asRecord(raw);
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: asString(block.text) ?? '' });
        break;
      case 'thinking': {
        const signature = asString(block.signature);
        parts.push(signature === undefined || signature === ''
          ? { type: 'reasoning', text: asString(block.thinking) ?? '' }
          : { type: 'reasoning', text: asString(block.thinking) ?? '', state: { provider: target.provider, data: { signature } } });
        break;
      }
      case 'redacted_thinking':
        parts.push({ type: 'reasoning', text: '', redacted: true, state: { provider: target.provider, data: { data: asString(block.data) ?? '' } } });
        break;
      case 'tool_use':
        parts.push({ type: 'tool-call', id: asString(block.id) ?? '', name: asString(block.name) ?? '', arguments: JSON.stringify(isRecord(block.input) ? block.input : {}) });
        break;
      default:
        break; // server-tool blocks and blocks newer than this code
    }
  }
  const choice: Choice = { index: 0, parts, finish: fromAnthropicStopReason(msg.stop_reason) };
  const stopSequence = asString(msg.stop_sequence);
  if (stopSequence !== undefined) choice.stopSequence = stopSequence;
  const explanation = asString(asRecord(msg.stop_details).explanation);
  if (msg.stop_reason === 'refusal' && explanation !== undefined) choice.refusal = explanation;
  const response: Response = { choices: [choice] };
  const id = asString(msg.id);
  if (id !== undefined) response.id = id;
  const model = asString(msg.model);
  if (model !== undefined) response.model = model;
  const usage = fromAnthropicUsage(msg.usage);
  if (usage !== undefined) response.usage = usage;
  return response;
}
