// A mock provider on loopback that speaks one provider's real wire format (JSON and SSE), checks
// the provider key the way the real API does, and records every request it receives.
// Self-contained (node: imports only, erasable TypeScript) so the bench can run it with plain Node.
import { createServer, type IncomingMessage, type ServerResponse, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export type MockProviderId = 'anthropic' | 'openai' | 'gemini';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** True when the client (the gateway) closed the connection before the response was complete. */
  aborted: boolean;
  /** When the whole request had arrived (ms since the epoch): the mock's own clock, for waits between attempts. */
  at: number;
}

export interface MockReply {
  status?: number;
  headers?: Record<string, string>;
  /** A whole body. */
  body?: string | Buffer;
  /** Or a body written piece by piece, `delayMs` apart (streams). */
  chunks?: Array<string | Buffer>;
  delayMs?: number;
  /** Never answer (for timeout tests). */
  hang?: boolean;
  /** Awaited before chunk `i` is written: lets a test hold a stream back until it has seen what came before. */
  beforeChunk?: (i: number) => Promise<void> | void;
}

export type MockHandler = (req: Recorded, provider: MockProviderId) => MockReply | undefined;

export interface MockProvider {
  provider: MockProviderId;
  origin: string;
  key: string;
  requests: Recorded[];
  /** Replace the answer for the next requests; return undefined to fall back to the default. */
  setHandler(fn: MockHandler | undefined): void;
  /** Resolves when `n` requests have been received. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function json(status: number, body: unknown): MockReply {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

function authFailure(provider: MockProviderId): MockReply {
  if (provider === 'anthropic') return json(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' }, request_id: 'req_mock' });
  if (provider === 'openai') return json(401, { error: { message: 'Incorrect API key provided: sk-…', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
  return json(400, { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }] } });
}

function presentedKey(provider: MockProviderId, r: Recorded): string | undefined {
  if (provider === 'anthropic') return r.headers['x-api-key'] as string | undefined;
  if (provider === 'openai') return (r.headers.authorization as string | undefined)?.replace(/^Bearer /, '');
  return r.headers['x-goog-api-key'] as string | undefined;
}

function parseJson(buf: Buffer): Record<string, unknown> {
  try { return JSON.parse(buf.toString('utf8')) as Record<string, unknown>; } catch { return {}; }
}

/** Splits a text into a few pieces, as a model streams it. */
function pieces(text: string): string[] {
  const words = text.split(/(?<= )/);
  return words.length > 0 ? words : [text];
}

export const MOCK_TEXT = 'Hello from the mock provider.';

/**
 * The tokens an answer reports, each provider writing them its own way (provider-reference.md §4.7):
 * `input` is the prompt's uncached part, `cacheRead` and the writes by TTL the rest of it; `output`
 * includes `reasoning`. Anthropic counts input without the cache and reports writes by TTL; OpenAI
 * and Gemini count the cache reads inside the prompt and report no writes (a write given to them
 * counts in their prompt only). Without it, each answer reports 12 input tokens and one output
 * token per word, no cache.
 */
export interface MockTokens {
  input: number;
  cacheRead?: number;
  cacheWrite5m?: number;
  cacheWrite1h?: number;
  output: number;
  reasoning?: number;
}

const written = (t: MockTokens): number => (t.cacheWrite5m ?? 0) + (t.cacheWrite1h ?? 0);
/** The whole prompt, as OpenAI and Gemini count it. */
const prompt = (t: MockTokens): number => t.input + (t.cacheRead ?? 0) + written(t);

/** Messages' `usage` (`output`: the output so far, for a stream's first event). */
export function anthropicUsage(t: MockTokens, output = t.output): Record<string, unknown> {
  const usage: Record<string, unknown> = { input_tokens: t.input, cache_creation_input_tokens: written(t), cache_read_input_tokens: t.cacheRead ?? 0, output_tokens: output };
  if (t.cacheWrite5m !== undefined || t.cacheWrite1h !== undefined) usage.cache_creation = { ephemeral_5m_input_tokens: t.cacheWrite5m ?? 0, ephemeral_1h_input_tokens: t.cacheWrite1h ?? 0 };
  if (t.reasoning !== undefined) usage.output_tokens_details = { thinking_tokens: t.reasoning };
  return usage;
}

/** Chat Completions' `usage`: cached tokens inside `prompt_tokens`, reasoning inside `completion_tokens`. */
export function chatUsage(t: MockTokens): Record<string, unknown> {
  const usage: Record<string, unknown> = { prompt_tokens: prompt(t), completion_tokens: t.output, total_tokens: prompt(t) + t.output };
  if (t.cacheRead !== undefined) usage.prompt_tokens_details = { cached_tokens: t.cacheRead };
  if (t.reasoning !== undefined) usage.completion_tokens_details = { reasoning_tokens: t.reasoning };
  return usage;
}

/** Responses' `usage`. */
export function responsesUsage(t: MockTokens): Record<string, unknown> {
  return {
    input_tokens: prompt(t), input_tokens_details: { cached_tokens: t.cacheRead ?? 0 },
    output_tokens: t.output, output_tokens_details: { reasoning_tokens: t.reasoning ?? 0 }, total_tokens: prompt(t) + t.output,
  };
}

/** Gemini's `usageMetadata`: cached content inside `promptTokenCount`, thoughts apart from candidates; counts that are 0 left out. */
export function geminiUsage(t: MockTokens): Record<string, unknown> {
  const thoughts = t.reasoning ?? 0;
  const usage: Record<string, unknown> = { promptTokenCount: prompt(t), candidatesTokenCount: t.output - thoughts, totalTokenCount: prompt(t) + t.output };
  if (t.cacheRead) usage.cachedContentTokenCount = t.cacheRead;
  if (thoughts) usage.thoughtsTokenCount = thoughts;
  return usage;
}

/**
 * What the mock answers when no handler does (a handler may call it with a rewritten request, or
 * with the tokens the answer should report).
 */
export function defaultReply(provider: MockProviderId, r: Recorded, tokens?: MockTokens): MockReply {
  const path = r.url.split('?')[0]!;
  if (r.method === 'GET' && /\/models$/.test(path)) {
    if (provider === 'gemini') return json(200, { models: [{ name: 'models/gemini-3.5-flash', supportedGenerationMethods: ['generateContent', 'countTokens'] }, { name: 'models/text-embedding-004', supportedGenerationMethods: ['embedContent'] }] });
    if (provider === 'anthropic') return json(200, { data: [{ type: 'model', id: 'claude-opus-5', display_name: 'Claude Opus 5', created_at: '2026-07-24T00:00:00Z' }], has_more: false });
    return json(200, { object: 'list', data: [{ id: 'gpt-5.4', object: 'model', created: 1767225600, owned_by: 'openai' }] });
  }
  const body = parseJson(r.body);
  const words = pieces(MOCK_TEXT);
  if (provider === 'anthropic' && path === '/v1/messages') {
    const model = String(body.model ?? 'claude-opus-5');
    const t = tokens ?? { input: 12, output: words.length };
    if (body.stream === true) {
      const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
      return {
        headers: { 'content-type': 'text/event-stream', 'request-id': 'req_mock' },
        chunks: [
          ev('message_start', { type: 'message_start', message: { id: 'msg_mock', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: anthropicUsage(t, 1) } }),
          ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
          ev('ping', { type: 'ping' }),
          ...words.map((w) => ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: w } })),
          ev('content_block_stop', { type: 'content_block_stop', index: 0 }),
          // The input counts again (cumulative, as Anthropic now sends them) only when asked for tokens.
          ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: tokens ? anthropicUsage(tokens) : { output_tokens: words.length } }),
          ev('message_stop', { type: 'message_stop' }),
        ],
      };
    }
    return { ...json(200, { id: 'msg_mock', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: MOCK_TEXT }], stop_reason: 'end_turn', stop_sequence: null, usage: anthropicUsage(t) }), headers: { 'content-type': 'application/json', 'request-id': 'req_mock' } };
  }
  if (provider === 'anthropic' && path === '/v1/messages/count_tokens') return json(200, { input_tokens: 12 });
  if (provider === 'openai' && path === '/v1/chat/completions') {
    const model = String(body.model ?? 'gpt-5.4');
    const usage = chatUsage(tokens ?? { input: 12, output: words.length });
    if (body.stream === true) {
      const withUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1767225600, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })}\n\n`;
      return {
        headers: { 'content-type': 'text/event-stream' },
        chunks: [
          chunk({ role: 'assistant', content: '' }, null),
          ...words.map((w) => chunk({ content: w }, null)),
          chunk({}, 'stop'),
          ...(withUsage ? [`data: ${JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1767225600, model, choices: [], usage })}\n\n`] : []),
          'data: [DONE]\n\n',
        ],
      };
    }
    return json(200, { id: 'chatcmpl-mock', object: 'chat.completion', created: 1767225600, model, choices: [{ index: 0, message: { role: 'assistant', content: MOCK_TEXT, refusal: null }, logprobs: null, finish_reason: 'stop' }], usage });
  }
  if (provider === 'openai' && path === '/v1/responses') return responsesReply(String(body.model ?? 'gpt-5.4'), body.stream === true, words, tokens);
  if (provider === 'openai' && path === '/v1/embeddings') return json(200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: String(body.model ?? ''), usage: { prompt_tokens: 2, total_tokens: 2 } });
  const gm = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path);
  if (provider === 'gemini' && gm) {
    const model = decodeURIComponent(gm[1]!);
    if (gm[2] === 'countTokens') return json(200, { totalTokens: 12 });
    // A stream's usage is cumulative: the prompt's from the first fragment, the output's growing.
    const usage = (n: number) => (tokens ? geminiUsage(n === words.length ? tokens : { ...tokens, output: n, reasoning: 0 }) : { promptTokenCount: 12, candidatesTokenCount: n, totalTokenCount: 12 + n });
    const response = (text: string, n: number, finish?: string) => ({ candidates: [{ content: { parts: [{ text }], role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 }], usageMetadata: usage(n), modelVersion: model, responseId: 'resp-mock' });
    if (gm[2] === 'streamGenerateContent') {
      const sse = r.url.includes('alt=sse');
      const events = words.map((w, i) => response(w, i + 1, i === words.length - 1 ? 'STOP' : undefined));
      if (sse) return { headers: { 'content-type': 'text/event-stream' }, chunks: events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`) };
      return { headers: { 'content-type': 'application/json' }, chunks: events.map((e, i) => `${i === 0 ? '[' : ',\r\n'}${JSON.stringify(e)}${i === events.length - 1 ? ']' : ''}`) };
    }
    return json(200, response(MOCK_TEXT, words.length, 'STOP'));
  }
  if (provider === 'anthropic') return json(404, { type: 'error', error: { type: 'not_found_error', message: `Not found: ${path}` } });
  if (provider === 'openai') return json(404, { error: { message: `Invalid URL (${r.method} ${path})`, type: 'invalid_request_error', param: null, code: null } });
  return json(404, { error: { code: 404, message: `Not found: ${path}`, status: 'NOT_FOUND' } });
}

/** OpenAI's Responses API answering MOCK_TEXT: a response object, or its typed SSE events. */
export function responsesReply(model: string, stream: boolean, words: string[], tokens?: MockTokens): MockReply {
  const usage = responsesUsage(tokens ?? { input: 12, output: words.length });
  const message = (status: string, text: string) => ({ id: 'msg_mock', type: 'message', status, role: 'assistant', content: status === 'completed' ? [{ type: 'output_text', text, annotations: [], logprobs: [] }] : [] });
  const response = (status: string, output: unknown[]) => ({ id: 'resp_mock', object: 'response', created_at: 1767225600, status, model, output, usage: status === 'completed' ? usage : null, error: null, incomplete_details: null });
  if (!stream) return json(200, response('completed', [message('completed', MOCK_TEXT)]));
  let seq = 0;
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const ref = { item_id: 'msg_mock', output_index: 0, content_index: 0 };
  return {
    headers: { 'content-type': 'text/event-stream' },
    chunks: [
      ev('response.created', { response: response('in_progress', []) }),
      ev('response.in_progress', { response: response('in_progress', []) }),
      ev('response.output_item.added', { output_index: 0, item: message('in_progress', '') }),
      ev('response.content_part.added', { ...ref, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } }),
      ...words.map((w) => ev('response.output_text.delta', { ...ref, delta: w, logprobs: [] })),
      ev('response.output_text.done', { ...ref, text: MOCK_TEXT, logprobs: [] }),
      ev('response.content_part.done', { ...ref, part: { type: 'output_text', text: MOCK_TEXT, annotations: [], logprobs: [] } }),
      ev('response.output_item.done', { output_index: 0, item: message('completed', MOCK_TEXT) }),
      ev('response.completed', { response: response('completed', [message('completed', MOCK_TEXT)]) }),
    ],
  };
}

// ---- quirk modes: OpenAI-compatible servers that depart from OpenAI, as the real ones do -------
// (src/providers/quirks.ts is the gateway's side; each refusal's text is the provider's own.) In a
// quirk mode the server answers a request with tools by calling the first tool, and a request whose
// last message is a tool result with text, so tool loops run as they would against the real one.

export type MockQuirk =
  /** Thinking mode: 400 when an assistant turn with tool_calls lacks reasoning_content; answers carry reasoning_content. */
  | 'deepseek'
  /** 422 on max_completion_tokens, store, stream_options; 400 on a tool-call id that is not 9 alphanumerics; mints such ids. */
  | 'mistral'
  /** Streamed answers lose their tool calls (finish_reason "stop", no tool_calls); unstreamed ones keep them. */
  | 'ollama'
  /** 400 on store, logprobs, top_logprobs, logit_bias, messages[].name, n other than 1, and non-string system content. */
  | 'groq';

export const DEEPSEEK_REASONING = 'The user wants the weather: call the tool first.';
const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;

type Msg = { role?: unknown; content?: unknown; name?: unknown; tool_calls?: Array<{ id?: unknown }>; tool_call_id?: unknown; reasoning_content?: unknown };

function quirkRefusal(quirk: MockQuirk, body: Record<string, unknown>): MockReply | undefined {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Msg[];
  const oai = (status: number, message: string) => json(status, { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } });
  switch (quirk) {
    case 'deepseek': {
      const thinking = (body.thinking as { type?: unknown } | undefined)?.type !== 'disabled';
      if (thinking && messages.some((m) => m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0 && typeof m.reasoning_content !== 'string')) {
        return oai(400, 'The `reasoning_content` in the thinking mode must be passed back to the API.');
      }
      return undefined;
    }
    case 'mistral': {
      const extra = ['max_completion_tokens', 'store', 'stream_options'].filter((k) => k in body);
      if (extra.length > 0) {
        return json(422, { object: 'error', message: { detail: extra.map((k) => ({ type: 'extra_forbidden', loc: ['body', k], msg: 'Extra inputs are not permitted', input: body[k] })) }, type: 'invalid_request_error', param: null, code: null });
      }
      for (const m of messages) {
        for (const id of [...(m.tool_calls ?? []).map((c) => c.id), ...(m.tool_call_id !== undefined ? [m.tool_call_id] : [])]) {
          if (typeof id !== 'string' || !MISTRAL_ID.test(id)) return json(400, { object: 'error', message: `Tool call id was ${String(id)} but must be a-z, A-Z, 0-9, with a length of 9.`, type: 'invalid_request_error', param: null, code: null });
        }
      }
      return undefined;
    }
    case 'groq': {
      if ('store' in body) return oai(400, "property 'store' is unsupported, did you mean 'stop'?");
      for (const k of ['logprobs', 'top_logprobs', 'logit_bias']) if (k in body) return oai(400, `'${k}' : property '${k}' is unsupported`);
      if (body.n !== undefined && body.n !== 1) return oai(400, "'n' : number must be at most 1");
      for (const [i, m] of messages.entries()) {
        if (m.name !== undefined) return oai(400, `'messages.${i}' : property 'name' is unsupported`);
        if (m.role === 'system' && typeof m.content !== 'string') return oai(400, `'messages.${i}' : for 'role:system' the following must be satisfied[('messages.${i}.content' : value must be a string)]`);
      }
      return undefined;
    }
    case 'ollama':
      return undefined;
  }
}

/** A chat answer in the quirk's manner: a call of the first tool, or text after a tool result. */
function quirkAnswer(quirk: MockQuirk, body: Record<string, unknown>): MockReply {
  const model = String(body.model ?? 'model');
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Msg[];
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{ function?: { name?: string } }>) : [];
  const callTool = tools.length > 0 && messages.at(-1)?.role !== 'tool';
  const call = { id: quirk === 'mistral' ? 'Xq7bT2mLp' : 'call_q1', type: 'function', function: { name: tools[0]?.function?.name ?? 'tool', arguments: '{"city":"Paris"}' } };
  const reasoning = quirk === 'deepseek' ? DEEPSEEK_REASONING : undefined;
  const usage = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };
  const finish = callTool ? 'tool_calls' : 'stop';
  if (body.stream !== true) {
    const message = { role: 'assistant', content: callTool ? null : MOCK_TEXT, ...(reasoning ? { reasoning_content: reasoning } : {}), ...(callTool ? { tool_calls: [call] } : {}) };
    return json(200, { id: 'chatcmpl-quirk', object: 'chat.completion', created: 1767225600, model, choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage });
  }
  const withUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const chunk = (delta: unknown, finishReason: string | null, extra: object = {}) => `data: ${JSON.stringify({ id: 'chatcmpl-quirk', object: 'chat.completion.chunk', created: 1767225600, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...extra })}\n\n`;
  const chunks = [chunk({ role: 'assistant', content: '' }, null)];
  if (reasoning) chunks.push(chunk({ reasoning_content: reasoning }, null));
  // Ollama's bug: with tools, the stream ends as if the model had said nothing.
  if (callTool && quirk === 'ollama') chunks.push(chunk({}, 'stop'));
  else if (callTool) chunks.push(chunk({ tool_calls: [{ index: 0, ...call }] }, null), chunk({}, 'tool_calls', quirk === 'mistral' ? { usage } : {}));
  else chunks.push(...pieces(MOCK_TEXT).map((w) => chunk({ content: w }, null)), chunk({}, 'stop', quirk === 'mistral' ? { usage } : {}));
  if (withUsage) chunks.push(`data: ${JSON.stringify({ id: 'chatcmpl-quirk', object: 'chat.completion.chunk', created: 1767225600, model, choices: [], usage })}\n\n`);
  chunks.push('data: [DONE]\n\n');
  return { headers: { 'content-type': 'text/event-stream' }, chunks };
}

/** What a quirk-mode server answers to a Chat Completions request (undefined for anything else). */
export function quirkReply(quirk: MockQuirk, r: Recorded): MockReply | undefined {
  if (r.method !== 'POST' || !/\/chat\/completions$/.test(r.url.split('?')[0]!)) return undefined;
  const body = parseJson(r.body);
  return quirkRefusal(quirk, body) ?? quirkAnswer(quirk, body);
}

export interface MockOptions {
  key?: string;
  port?: number;
  /**
   * The path the API is served under, as a server behind a base URL with a path does
   * (`/api` for `http://host/api/v1`): requests outside it get the protocol's 404, the rest are
   * answered as if it were not there. Recorded URLs keep it.
   */
  mount?: string;
  /** false: a local server that takes no key (any credential or none is accepted, and recorded). */
  requireKey?: boolean;
  /** Behave as one OpenAI-compatible server does where it departs from OpenAI (the quirk modes above). */
  quirk?: MockQuirk;
}

export async function startMockProvider(provider: MockProviderId, opts: MockOptions = {}): Promise<MockProvider> {
  const key = opts.key ?? `real-${provider}-key-0123456789`;
  const requests: Recorded[] = [];
  let handler: MockHandler | undefined;
  let waiters: Array<{ n: number; resolve: () => void }> = [];

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) parts.push(c);
    const rec: Recorded = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: Buffer.concat(parts), aborted: false, at: Date.now() };
    requests.push(rec);
    waiters = waiters.filter((w) => { if (requests.length >= w.n) { w.resolve(); return false; } return true; });
    let finished = false;
    res.on('close', () => { if (!finished) rec.aborted = true; });
    const mounted = !opts.mount || rec.url === opts.mount || rec.url.startsWith(`${opts.mount}/`);
    const inner: Recorded = mounted && opts.mount ? { ...rec, url: rec.url.slice(opts.mount.length) || '/' } : rec;
    const answer = (r: Recorded): MockReply => (opts.quirk ? quirkReply(opts.quirk, r) : undefined) ?? defaultReply(provider, r);
    const reply = handler?.(inner, provider)
      ?? (!mounted ? defaultReply(provider, { ...rec, url: '/not-under-the-mount' })
        : opts.requireKey === false || presentedKey(provider, rec) === key ? answer(inner) : authFailure(provider));
    if (reply.hang) return;
    res.writeHead(reply.status ?? 200, reply.headers ?? {});
    if (reply.chunks) {
      for (const [i, c] of reply.chunks.entries()) {
        if (reply.beforeChunk) await reply.beforeChunk(i);
        if (res.destroyed) return;
        res.write(c);
        if (reply.delayMs) await sleep(reply.delayMs);
      }
      finished = true;
      res.end();
    } else {
      finished = true;
      res.end(reply.body ?? '');
    }
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    provider,
    origin: `http://127.0.0.1:${port}`,
    key,
    requests,
    setHandler(fn) { handler = fn; },
    waitForRequests(n, timeoutMs = 5000) {
      if (requests.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`mock ${provider}: expected ${n} requests, got ${requests.length}`)), timeoutMs);
        waiters.push({ n, resolve: () => { clearTimeout(t); resolve(); } });
      });
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
