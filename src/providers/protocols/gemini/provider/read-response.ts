// A GenerateContentResponse (JSON) → the IR answer. A prompt Gemini blocked has no candidates and
// reads as a content-filter stop.
import type { Target } from '../../../ir/protocol.js';
import type { Choice, Response } from '../../../ir/types.js';
import { asArray, asNumber, asRecord, asString } from '../../../shared/lenient-json.js';
import { isPromptBlocked } from '../../../gemini/parts.js';
import { candidateParts, fromFinishReason, fromUsageMetadata } from './wire.js';

export function readGeminiResponse(body: unknown, target: Target): Response {
  const o = asRecord(Array.isArray(body) ? body.at(-1) : body);
  const idBase = (asString(o.responseId) ?? 'gemini').replace(/[^a-zA-Z0-9_-]/g, '');
  let n = 0;
  const choices: Choice[] = asArray(o.candidates).map((raw, i) => {
    const c = asRecord(raw);
    const parts = candidateParts(c, target.provider, idBase, () => n++);
    return { index: asNumber(c.index) ?? i, parts, finish: fromFinishReason(asString(c.finishReason), parts.some((p) => p.type === 'tool-call')) };
  });
  if (choices.length === 0) choices.push({ index: 0, parts: [], finish: isPromptBlocked(o) ? 'content-filter' : 'stop' });
  const response: Response = { choices };
  const id = asString(o.responseId);
  if (id) response.id = id;
  const model = asString(o.modelVersion);
  if (model) response.model = model.replace(/^models\//, '');
  const usage = fromUsageMetadata(o.usageMetadata);
  if (usage) response.usage = usage;
  return response;
}
