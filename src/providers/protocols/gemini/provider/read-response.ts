// A Gemini `GenerateContentResponse` (JSON) → the IR answer (provider-reference.md §3.4, §4.5).
// One choice per candidate; a prompt Gemini refused outright is one content-filter choice.
import type { Target } from '../../../ir/protocol.js';
import type { AssistantPart, Choice, Response } from '../../../ir/types.js';
import { asArray, asNumber, asRecord, asString } from '../../../shared/lenient-json.js';
import { fromGeminiFinishReason } from '../finish-reason.js';
import { isPromptBlocked, modelVersion, readLogprobs, readParts } from '../read-parts.js';
import { fromGeminiUsage } from '../usage.js';

export function readGeminiResponse(body: unknown, target: Target): Response {
  const response = asRecord(body);
  const choices = asArray(response.candidates).map((candidate, i): Choice => {
    const c = asRecord(candidate);
    const parts: AssistantPart[] = [];
    let calls = 0;
    for (const view of readParts(c, target.provider)) {
      if (view.kind === 'call') {
        calls++;
        parts.push({ type: 'tool-call', id: view.id, name: view.name, arguments: view.arguments, state: view.state });
      } else {
        const part: AssistantPart = view.kind === 'thought' ? { type: 'reasoning', text: view.text } : { type: 'text', text: view.text };
        if (view.state !== undefined) part.state = view.state;
        parts.push(part);
      }
    }
    const choice: Choice = { index: asNumber(c.index) ?? i, parts, finish: fromGeminiFinishReason(asString(c.finishReason), calls > 0) };
    const logprobs = readLogprobs(c.logprobsResult);
    if (logprobs !== undefined) choice.logprobs = logprobs;
    return choice;
  });
  // No candidates: a blocked prompt, or an empty answer read leniently.
  if (choices.length === 0) choices.push({ index: 0, parts: [], finish: isPromptBlocked(response) ? 'content-filter' : 'stop' });
  const out: Response = { choices };
  const id = asString(response.responseId);
  if (id !== undefined) out.id = id;
  const model = modelVersion(response);
  if (model !== undefined) out.model = model;
  const usage = fromGeminiUsage(response.usageMetadata);
  if (usage !== undefined) out.usage = usage;
  return out;
}
