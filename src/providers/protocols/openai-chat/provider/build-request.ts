// IR → an OpenAI Chat Completions call (provider-reference.md §1.2–1.3, §4). System text becomes
// the first message; a user turn's tool results become `tool` messages ahead of the rest of that
// turn; reasoning goes back only where the provider's quirk profile asks for it (OpenAI takes
// none). Only what the IR set is sent; the profile's wire fixes come last (apply-quirks.ts).
import { openaiJsonInWords } from '../../../shared/json-instruction.js';
import type { Target } from '../../../ir/protocol.js';
import type { AssistantPart, DocumentPart, Effort, ImagePart, Message, ReasoningPart, Request, TextPart, ToolResultPart } from '../../../ir/types.js';
import type { UpstreamCall } from '../../../types.js';
import { OPENAI_PROFILE, type QuirkProfile } from '../../../quirks.js';
import { maxOutputTokens } from '../../../registry.js';
import { tryParseJson } from '../../../shared/lenient-json.js';
import { applyChatQuirks } from './apply-quirks.js';
import { REASONING_DETAILS_KEY } from './reasoning-details.js';

type Json = Record<string, unknown>;

function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}

function mediaPart(p: ImagePart | DocumentPart): Json {
  const s = p.source;
  if (p.type === 'image') return { type: 'image_url', image_url: { url: s.kind === 'base64' ? dataUrl(s.mediaType, s.data) : s.kind === 'url' ? s.url : '' } };
  if (s.kind === 'text') return { type: 'text', text: s.text };
  if (s.kind === 'url') return { type: 'text', text: p.title ? `${p.title}: ${s.url}` : s.url };
  return { type: 'file', file: { filename: p.title ?? 'document.pdf', file_data: dataUrl(s.mediaType, s.data) } };
}

function contentOf(parts: Array<TextPart | ImagePart | DocumentPart>): string | Json[] {
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => (p as TextPart).text).join('');
  return parts.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : mediaPart(p)));
}

function toolMessages(result: ToolResultPart): Json[] {
  const text = result.content.filter((c): c is TextPart => c.type === 'text').map((c) => c.text).join('');
  const media = result.content.filter((c) => c.type !== 'text') as Array<ImagePart | DocumentPart>;
  const out: Json[] = [{ role: 'tool', tool_call_id: result.callId, content: result.isError ? `Error: ${text}` : text }];
  // A tool message carries text only: its images follow in a user message.
  if (media.length > 0) out.push({ role: 'user', content: media.map(mediaPart) });
  return out;
}

/**
 * The reasoning an assistant turn gives back, in the field the profile names: the turn's reasoning
 * text as `reasoning_content` (DeepSeek needs it on every turn with tool calls), or the
 * `reasoning_details` blocks this provider minted, unmodified (OpenRouter).
 */
function reasoningBack(parts: AssistantPart[], hasCalls: boolean, q: QuirkProfile, provider: string): Json {
  if (q.reasoningBack === 'none' || (q.reasoningBack === 'tool-turns' && !hasCalls)) return {};
  const reasoning = parts.filter((p): p is ReasoningPart => p.type === 'reasoning');
  if (q.reasoningDetails) {
    const details: unknown[] = [];
    for (const p of reasoning) {
      const raw = p.state?.provider === provider ? p.state.data[REASONING_DETAILS_KEY] : undefined;
      const parsed = raw === undefined ? undefined : tryParseJson(raw);
      if (Array.isArray(parsed)) details.push(...parsed);
    }
    return details.length > 0 ? { reasoning_details: details } : {};
  }
  // A tool turn with no reasoning to give gets its empty field from apply-quirks.ts, as a client's own history does.
  const text = reasoning.filter((p) => p.redacted !== true).map((p) => p.text).join('');
  return text !== '' ? { reasoning_content: text } : {};
}

function messages(system: TextPart[], turns: Message[], q: QuirkProfile, provider: string): Json[] {
  const out: Json[] = [];
  if (system.length > 0) out.push({ role: 'system', content: system.map((p) => p.text).join('\n\n') });
  for (const m of turns) {
    if (m.role === 'user') {
      const rest: Array<TextPart | ImagePart | DocumentPart> = [];
      for (const p of m.parts) {
        if (p.type === 'tool-result') out.push(...toolMessages(p));
        else rest.push(p);
      }
      if (rest.length > 0) out.push({ role: 'user', content: contentOf(rest) });
      continue;
    }
    const text = m.parts.filter((p): p is TextPart => p.type === 'text').map((p) => p.text).join('');
    const calls = m.parts.filter((p) => p.type === 'tool-call').map((p) => ({ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments } }));
    if (text === '' && calls.length === 0) continue; // reasoning only: nothing Chat takes back
    const msg: Json = { role: 'assistant', content: text === '' ? null : text, ...reasoningBack(m.parts, calls.length > 0, q, provider) };
    if (calls.length > 0) msg.tool_calls = calls;
    out.push(msg);
  }
  return out;
}

/** OpenAI's effort scale stops at `high` for most models; `minimal` and `none` only exist on some. */
const EFFORT: Record<Effort, string | undefined> = { none: 'minimal', minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' };

export function buildChatRequest(req: Request, target: Target): UpstreamCall {
  const q = target.quirks ?? OPENAI_PROFILE;
  const inWords = openaiJsonInWords(req.output);
  const system = inWords === undefined ? req.system : [...req.system, { type: 'text' as const, text: inWords }];
  const body: Json = { model: target.model, messages: messages(system, req.messages, q, target.provider) };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.inputSchema, ...(t.strict ? { strict: true } : {}) },
    }));
  }
  const tc = req.toolChoice;
  if (tc) body.tool_choice = tc.type === 'tool' ? { type: 'function', function: { name: tc.name } } : tc.type;
  if (req.parallelToolCalls !== undefined && req.tools.length > 0) body.parallel_tool_calls = req.parallelToolCalls;
  if (req.maxOutputTokens !== undefined) {
    const limit = maxOutputTokens(target.provider, target.model);
    body.max_completion_tokens = limit === undefined ? req.maxOutputTokens : Math.min(req.maxOutputTokens, limit);
  }
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stopSequences.length > 0) body.stop = req.stopSequences;
  if (req.candidates !== undefined && req.candidates !== 1) body.n = req.candidates;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.frequencyPenalty !== undefined) body.frequency_penalty = req.frequencyPenalty;
  if (req.presencePenalty !== undefined) body.presence_penalty = req.presencePenalty;
  if (req.logprobs) { body.logprobs = true; if (req.logprobs.top > 0) body.top_logprobs = req.logprobs.top; }
  if (req.output?.type === 'json' && inWords === undefined) {
    body.response_format = req.output.schema
      ? { type: 'json_schema', json_schema: { name: req.output.name ?? 'response', schema: req.output.schema, ...(req.output.strict ? { strict: true } : {}) } }
      : { type: 'json_object' };
  }
  // Reasoning effort only where the client asked for reasoning; an explicit "off" sends nothing.
  const r = req.reasoning;
  if (r && r.enabled !== false && r.effort !== undefined) body.reasoning_effort = EFFORT[r.effort];
  if (req.user !== undefined) body.user = req.user;
  if (req.promptCacheKey !== undefined) body.prompt_cache_key = req.promptCacheKey;
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true }; // the gateway accounts every stream
  }
  return { path: '/v1/chat/completions', body: applyChatQuirks(body, q, target.model, target.displayName) };
}
