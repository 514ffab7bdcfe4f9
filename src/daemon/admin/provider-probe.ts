// `gateway providers test <name>`: asks a provider the two things that prove it is set up right —
// its models list (the protocol's own call) and one tiny request built by the protocol's own
// module — and says plainly which failed and why: unreachable, wrong key, wrong protocol, or a
// model that does not exist. Never shows the key.
import type { Request } from '../../providers/ir/types.js';
import { fromModelsList } from '../../providers/models-list.js';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { provider as descriptor, upstreamPath, type ProviderDescriptor } from '../../providers/registry.js';
import { providerSide } from '../../providers/protocols/provider-sides.js';
import { targetOf } from '../../providers/target.js';
import { gatewayCallHeaders, type Upstreams } from '../relay/upstream.js';

export type Verdict = 'ok' | 'unreachable' | 'wrong_key' | 'wrong_protocol' | 'model_not_found' | 'no_model' | 'error';

export interface ProbeStep {
  step: 'models' | 'request';
  ok: boolean;
  /** The HTTP status, when the provider answered. */
  status: number | null;
  detail: string;
}

export interface ProbeResult {
  provider: string;
  verdict: Verdict;
  /** One sentence a person reads. */
  summary: string;
  steps: ProbeStep[];
  /** The models it listed (ids without the provider prefix), when it did. */
  models: string[] | null;
  /** The model the tiny request asked for. */
  model: string | null;
}


type Answer = { status: number; text: string } | { error: string };

async function call(upstreams: Upstreams, d: ProviderDescriptor, key: string, method: 'GET' | 'POST', path: string, body: string | undefined, extra: Record<string, string>, timeoutMs: number): Promise<Answer> {
  const headers = gatewayCallHeaders(d.id, key, { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}), ...extra });
  try {
    const r = await upstreams.request(d.id, { method, path: upstreamPath(d, path), headers, body, signal: AbortSignal.timeout(timeoutMs) });
    return { status: r.statusCode, text: await r.body.text() };
  } catch (e) {
    if ((e as Error).name === 'TimeoutError') return { error: `no answer within ${timeoutMs / 1000} s` };
    return { error: upstreams.failure(d.id, e).message };
  }
}

function messageOf(text: string): string {
  try {
    const j = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const m = typeof j.error === 'object' && j.error ? j.error.message : j.error ?? j.message ?? j.detail;
    if (typeof m === 'string') return m.slice(0, 200);
  } catch { /* not JSON */ }
  return text.replace(/\s+/g, ' ').trim().slice(0, 120);
}

function rejectsKey(d: ProviderDescriptor, status: number, text: string): boolean {
  return status === 401 || status === 403 || (status === 400 && PROTOCOL_FACTS[d.protocol].badKey400?.test(text) === true);
}

/** A 4xx that is about the model: 404 naming it or a `model_not_found` code, or a 400 saying it does not exist. */
function aboutModel(status: number, text: string, model: string): boolean {
  const lower = text.toLowerCase();
  if (/model_not_found|does not exist|not_found_error.*model|unknown model|invalid model|model .*not (found|exist|available)|no such model/.test(lower)) return status === 400 || status === 404 || status === 422;
  return status === 404 && lower.includes(model.toLowerCase());
}

const TINY: Omit<Request, 'model'> = {
  system: [], tools: [], stopSequences: [], stream: false, maxOutputTokens: 16,
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Reply with the word OK.' }] }],
};

export interface ProbeOptions {
  upstreams: Upstreams;
  provider: string;
  /** The provider's key ('' for one that takes none). */
  key: string;
  /** The model for the tiny request; else the first listed. */
  model?: string;
  timeoutMs?: number;
}

export async function probeProvider(opts: ProbeOptions): Promise<ProbeResult> {
  const d = descriptor(opts.provider);
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const steps: ProbeStep[] = [];
  const result = (verdict: Verdict, summary: string, models: string[] | null, model: string | null): ProbeResult => ({ provider: d.id, verdict, summary, steps, models, model });

  // 1. The models list: the cheapest call that proves the address and the key.
  let models: string[] | null = d.models ? [...d.models] : null;
  let modelsMissing = false;
  if (d.models) {
    steps.push({ step: 'models', ok: true, status: null, detail: `not asked: added with --models (${d.models.join(', ')})` });
  } else {
    const a = await call(opts.upstreams, d, opts.key, 'GET', d.modelsPath, undefined, {}, timeoutMs);
    if ('error' in a) {
      steps.push({ step: 'models', ok: false, status: null, detail: a.error });
      return result('unreachable', `unreachable: ${a.error}`, null, null);
    }
    if (rejectsKey(d, a.status, a.text)) {
      steps.push({ step: 'models', ok: false, status: a.status, detail: messageOf(a.text) });
      return result('wrong_key', `wrong key: ${d.displayName} refused it (HTTP ${a.status}: ${messageOf(a.text)})`, null, null);
    }
    if (a.status === 200) {
      let list: string[] | null = null;
      try { list = fromModelsList(d.id, JSON.parse(a.text)).map((m) => m.id.slice(d.id.length + 1)); } catch { /* not JSON */ }
      if (list && list.length > 0) {
        models = list;
        steps.push({ step: 'models', ok: true, status: 200, detail: `${list.length} model${list.length === 1 ? '' : 's'}: ${list.slice(0, 5).join(', ')}${list.length > 5 ? ', …' : ''}` });
      } else {
        modelsMissing = true;
        steps.push({ step: 'models', ok: false, status: 200, detail: `answered, but not with a ${d.protocol} models list` });
      }
    } else {
      modelsMissing = true;
      steps.push({ step: 'models', ok: false, status: a.status, detail: `HTTP ${a.status}${a.status === 404 ? ' (no models endpoint here)' : ''}: ${messageOf(a.text)}` });
    }
  }

  // 2. One tiny request, built by the protocol's own module.
  const model = opts.model ?? models?.[0] ?? null;
  if (!model) {
    steps.push({ step: 'request', ok: false, status: null, detail: 'skipped: no model to try' });
    return result('no_model', `reachable, but it listed no models: give one with --model <id> to send a test request`, models, null);
  }
  const side = await providerSide(d.protocol);
  const target = targetOf(d, model);
  const built = side.buildRequest({ ...TINY, model }, target);
  const a = await call(opts.upstreams, d, opts.key, 'POST', built.path, JSON.stringify(built.body), built.headers ?? {}, timeoutMs);
  if ('error' in a) {
    steps.push({ step: 'request', ok: false, status: null, detail: a.error });
    return result('unreachable', `unreachable: ${a.error}`, models, model);
  }
  if (a.status >= 200 && a.status < 300) {
    let words: string | null = null;
    try {
      const answer = side.readResponse(JSON.parse(a.text), target);
      if (answer.choices.length > 0 || answer.usage) words = answer.choices[0]?.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('').trim() ?? '';
    } catch { words = null; }
    if (words === null) {
      steps.push({ step: 'request', ok: false, status: a.status, detail: `answered, but not in the ${d.protocol} shape` });
      return result('wrong_protocol', `wrong protocol: ${model} answered, but not as ${d.protocol} does; check --protocol and the base URL`, models, model);
    }
    steps.push({ step: 'request', ok: true, status: a.status, detail: `${model} answered${words ? `: "${words.slice(0, 60)}"` : ''}` });
    return result('ok', `works: ${model} answered${modelsMissing ? ' (its models list did not; routing still works)' : ''}`, models, model);
  }
  const why = messageOf(a.text);
  steps.push({ step: 'request', ok: false, status: a.status, detail: `HTTP ${a.status}: ${why}` });
  if (rejectsKey(d, a.status, a.text)) return result('wrong_key', `wrong key: ${d.displayName} refused it (HTTP ${a.status}: ${why})`, models, model);
  if (aboutModel(a.status, a.text, model)) return result('model_not_found', `model does not exist: ${d.displayName} has no "${model}" (HTTP ${a.status}: ${why})`, models, model);
  if (a.status === 404 || a.status === 405) {
    return result('wrong_protocol', `wrong protocol: ${upstreamPath(d, built.path.split('?')[0]!)} is not there (HTTP ${a.status}); is it a ${d.protocol} endpoint? check --protocol and the base URL`, models, model);
  }
  return result('error', `${d.displayName} answered HTTP ${a.status}: ${why}`, models, model);
}
