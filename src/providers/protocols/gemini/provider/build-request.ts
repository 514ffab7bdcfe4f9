// IR → a Gemini generateContent / streamGenerateContent?alt=sse call (provider-reference.md §3.1–3.3,
// §4). Consecutive turns of one role are merged (Gemini wants alternation); tool results become
// functionResponse parts named after their call; a call Gemini minted keeps its id and gets its
// thoughtSignature back (Gemini 3 refuses a replayed call without it, §3.3); state minted by any
// other provider is dropped on purpose. Thought text is never sent back: Gemini takes none.
import type { Target } from '../../../ir/protocol.js';
import type { Effort, Message, Request, TextPart, ToolCallPart, UserPart } from '../../../ir/types.js';
import { TranslationError, type UpstreamCall } from '../../../types.js';
import { maxOutputTokens } from '../../../registry.js';
import { toGeminiParameters } from '../../../gemini/schema.js';
import type { GeminiContent, GeminiGenerationConfig, GeminiPart, GeminiRequestBody, GeminiToolConfig } from '../../../gemini/wire-types.js';

/** Marks a call id the reader made up because Gemini sent none: it is not sent back as an id. */
export const MINTED_ID = 'mintedId';

function mediaPart(p: Extract<UserPart, { type: 'image' | 'document' }>, param: string): GeminiPart {
  const s = p.source;
  if (s.kind === 'base64') return { inlineData: { mimeType: s.mediaType, data: s.data } };
  if (s.kind === 'text') return { text: s.text };
  if (s.mediaType) return { fileData: { mimeType: s.mediaType, fileUri: s.url } };
  throw new TranslationError(`${param}: Gemini takes images and documents inline (base64); a URL without a media type cannot be sent`, param);
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text === '' ? '{}' : text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return {};
  }
}

function callPart(call: ToolCallPart, provider: string): GeminiPart {
  const own = call.state?.provider === provider ? call.state.data : undefined;
  const fc: { id?: string; name: string; args: Record<string, unknown> } = { name: call.name, args: parseArgs(call.arguments) };
  if (own?.[MINTED_ID] === undefined) fc.id = call.id;
  const part: GeminiPart = { functionCall: fc };
  if (own?.thoughtSignature) (part as { thoughtSignature?: string }).thoughtSignature = own.thoughtSignature;
  return part;
}

function contents(messages: Message[], provider: string): GeminiContent[] {
  const names = new Map<string, { name: string; minted: boolean }>();
  const out: GeminiContent[] = [];
  const push = (role: 'user' | 'model', parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  };
  messages.forEach((m, i) => {
    if (m.role === 'assistant') {
      const parts: GeminiPart[] = [];
      for (const p of m.parts) {
        if (p.type === 'text' && p.text !== '') parts.push({ text: p.text });
        else if (p.type === 'tool-call') {
          names.set(p.id, { name: p.name, minted: p.state?.provider === provider && p.state.data[MINTED_ID] !== undefined });
          parts.push(callPart(p, provider));
        }
      }
      push('model', parts);
      return;
    }
    const parts: GeminiPart[] = [];
    m.parts.forEach((p, j) => {
      const param = `messages[${i}].content[${j}]`;
      if (p.type === 'text') { if (p.text !== '') parts.push({ text: p.text }); }
      else if (p.type === 'tool-result') {
        const call = names.get(p.callId);
        const name = p.name ?? call?.name;
        if (!name) throw new TranslationError(`${param}: this tool result answers no tool call in the conversation, and Gemini needs the tool's name`, param);
        const text = p.content.filter((c): c is TextPart => c.type === 'text').map((c) => c.text).join('');
        const fr: { id?: string; name: string; response: Record<string, unknown> } = { name, response: p.isError ? { error: text } : { output: text } };
        if (call && !call.minted) fr.id = p.callId;
        parts.push({ functionResponse: fr } as GeminiPart);
        for (const c of p.content) if (c.type !== 'text') parts.push(mediaPart(c, param));
      } else parts.push(mediaPart(p, param));
    });
    push('user', parts);
  });
  return out;
}

const LEVEL: Record<Effort, string> = { none: 'MINIMAL', minimal: 'MINIMAL', low: 'LOW', medium: 'MEDIUM', high: 'HIGH', xhigh: 'HIGH', max: 'HIGH' };
const BUDGET: Record<Effort, number> = { none: 0, minimal: 512, low: 1024, medium: 8192, high: 24576, xhigh: 24576, max: 32768 };

/** Gemini 2.x thinks in token budgets; Gemini 3 in levels (reference §3.2). */
function thinkingConfig(req: Request, model: string): GeminiGenerationConfig['thinkingConfig'] | undefined {
  const r = req.reasoning;
  if (!r || r.enabled === false) return undefined;
  const legacy = /^gemini-2\./.test(model);
  const config: Record<string, unknown> = {};
  if (r.budgetTokens !== undefined && (legacy || r.effort === undefined)) config.thinkingBudget = r.budgetTokens;
  else if (r.effort !== undefined) {
    if (legacy) config.thinkingBudget = BUDGET[r.effort];
    else config.thinkingLevel = LEVEL[r.effort];
  }
  if (r.includeText) config.includeThoughts = true;
  return Object.keys(config).length > 0 ? (config as GeminiGenerationConfig['thinkingConfig']) : undefined;
}

function toolConfig(req: Request): GeminiToolConfig | undefined {
  const c = req.toolChoice;
  if (!c || req.tools.length === 0) return undefined;
  switch (c.type) {
    case 'auto': return { functionCallingConfig: { mode: 'AUTO' } };
    case 'none': return { functionCallingConfig: { mode: 'NONE' } };
    case 'required': return { functionCallingConfig: { mode: 'ANY' } };
    case 'tool': return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [c.name] } };
    default: { const never: never = c; return never; }
  }
}

export function buildGeminiRequest(req: Request, target: Target): UpstreamCall {
  const body: GeminiRequestBody = { contents: contents(req.messages, target.provider) };
  if (req.system.length > 0) body.systemInstruction = { parts: [{ text: req.system.map((p) => p.text).join('\n\n') }] };
  if (req.tools.length > 0) {
    body.tools = [{
      functionDeclarations: req.tools.map((t, i) => {
        const d: { name: string; description?: string; parameters?: ReturnType<typeof toGeminiParameters> } = { name: t.name };
        if (t.description !== undefined) d.description = t.description;
        const params = toGeminiParameters(t.inputSchema, `tools[${i}].input_schema`);
        if (params !== undefined) d.parameters = params;
        return d as never;
      }),
    }];
  }
  const tc = toolConfig(req);
  if (tc) body.toolConfig = tc;
  const g: GeminiGenerationConfig = {};
  if (req.maxOutputTokens !== undefined) {
    const limit = maxOutputTokens(target.provider, target.model);
    g.maxOutputTokens = limit === undefined ? req.maxOutputTokens : Math.min(req.maxOutputTokens, limit);
  }
  if (req.temperature !== undefined) g.temperature = req.temperature;
  if (req.topP !== undefined) g.topP = req.topP;
  if (req.topK !== undefined) g.topK = req.topK;
  if (req.stopSequences.length > 0) g.stopSequences = req.stopSequences;
  if (req.candidates !== undefined && req.candidates !== 1) g.candidateCount = req.candidates;
  if (req.seed !== undefined) g.seed = req.seed;
  if (req.frequencyPenalty !== undefined) g.frequencyPenalty = req.frequencyPenalty;
  if (req.presencePenalty !== undefined) g.presencePenalty = req.presencePenalty;
  if (req.logprobs) { g.responseLogprobs = true; if (req.logprobs.top > 0) g.logprobs = req.logprobs.top; }
  if (req.output?.type === 'json') {
    g.responseMimeType = 'application/json';
    if (req.output.schema) {
      // `responseJsonSchema` takes standard JSON Schema; `$schema` is the one key it refuses.
      const { $schema: _ignored, ...rest } = req.output.schema;
      g.responseJsonSchema = rest;
    }
  }
  const thinking = thinkingConfig(req, target.model);
  if (thinking) g.thinkingConfig = thinking;
  if (Object.keys(g).length > 0) body.generationConfig = g;
  const model = encodeURIComponent(target.model.replace(/^models\//, ''));
  const path = req.stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`;
  return { path, body: body as unknown as Record<string, unknown> };
}
