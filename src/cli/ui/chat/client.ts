// How `gateway chat` talks to the local daemon: the unified endpoint, streamed (OpenAI format with
// usage), and /v1/models. Errors become one readable line; aborting the signal stops the answer
// and, because the connection closes, the daemon aborts the provider request too.
import { SseParser } from '../../../daemon/http/sse.js';
import { gatewayCmd } from '../../invocation.js';
import type { FetchLike } from '../../daemon-fetch.js';

export interface ChatMessage { role: 'system' | 'user' | 'assistant'; content: string }

export interface Usage { inputTokens?: number; outputTokens?: number; cachedTokens?: number; reasoningTokens?: number }

export interface ChatAnswer {
  text: string;
  /** The model the daemon reported (e.g. `anthropic/claude-opus-5`), when it did. */
  model: string | null;
  usage: Usage | null;
  finishReason: string | null;
  ms: number;
  ttfbMs: number | null;
}

export class ChatRequestError extends Error {
  constructor(message: string, readonly status: number | null = null, readonly code: string | null = null) {
    super(message);
    this.name = 'ChatRequestError';
  }
}

export interface ChatClient {
  /** Where the daemon is now (it may have restarted on another port). */
  url(): string;
  stream(model: string, messages: ChatMessage[], onDelta: (text: string) => void, signal?: AbortSignal): Promise<ChatAnswer>;
  models(signal?: AbortSignal): Promise<string[]>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseError(body: string): { message: string; code: string | null } {
  try {
    const j = JSON.parse(body) as unknown;
    const e = isObj(j) && isObj(j.error) ? j.error : undefined;
    if (e) {
      const message = typeof e.message === 'string' ? e.message.replace(/\s+/g, ' ').trim() : '';
      return { message, code: typeof e.code === 'string' ? e.code : typeof e.type === 'string' ? e.type : null };
    }
  } catch { /* not JSON */ }
  return { message: body.replace(/\s+/g, ' ').trim().slice(0, 200), code: null };
}

/** One line for an error answer: the daemon's (OpenAI-format) message, its code and status. */
export function errorLine(status: number, body: string, retryAfter?: string | null): string {
  const { message, code } = parseError(body);
  const hint = status === 429 && retryAfter ? `; retry after ${retryAfter} s` : '';
  return `${message || `the gateway answered HTTP ${status}`} (${[code, `HTTP ${status}`].filter(Boolean).join(', ')}${hint})`;
}

function usageOf(u: unknown): Usage | null {
  if (!isObj(u)) return null;
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const pd = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const cd = isObj(u.completion_tokens_details) ? u.completion_tokens_details : {};
  return { inputTokens: num(u.prompt_tokens), outputTokens: num(u.completion_tokens), cachedTokens: num(pd.cached_tokens), reasoningTokens: num(cd.reasoning_tokens) };
}

function networkError(url: string, e: unknown): ChatRequestError {
  const code = (e as { cause?: { code?: string } }).cause?.code;
  if (code === 'ECONNREFUSED') return new ChatRequestError(`the gateway at ${url} is not answering (is it running? ${gatewayCmd('start')})`);
  return new ChatRequestError(`cannot reach the gateway at ${url}: ${(e as Error).message}`);
}

/**
 * `url` is a fixed base URL, or a function that finds the daemon again for each request;
 * `fetcher` gives the fetch that trusts that daemon's TLS certificate (daemon-fetch.ts), if it has one.
 */
export function createChatClient(url: string | (() => string), key: string, fetcher: () => FetchLike = () => fetch): ChatClient {
  const base = typeof url === 'string' ? () => url : url;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': 'gateway-chat' };
  return {
    url: base,
    async stream(model, messages, onDelta, signal) {
      const t0 = performance.now();
      const url = base();
      let res: Response;
      try {
        res = await fetcher()(`${url}/v1/chat/completions`, {
          method: 'POST', headers: { ...headers, accept: 'text/event-stream' }, signal,
          body: JSON.stringify({ model, messages, stream: true, stream_options: { include_usage: true } }),
        });
      } catch (e) {
        if (signal?.aborted) throw e;
        throw networkError(url, e);
      }
      if (!res.ok || !res.body) {
        const text = await res.text().catch(() => '');
        throw new ChatRequestError(errorLine(res.status, text, res.headers.get('retry-after')), res.status);
      }
      const answer: ChatAnswer = { text: '', model: null, usage: null, finishReason: null, ms: 0, ttfbMs: null };
      const parser = new SseParser();
      const handle = (data: string): boolean => {
        if (data === '[DONE]') return true;
        let j: unknown;
        try { j = JSON.parse(data); } catch { return false; }
        if (!isObj(j)) return false;
        if (isObj(j.error)) {
          const { message, code } = parseError(data);
          throw new ChatRequestError(`${message || 'the provider failed'} (${code ? `${code}, ` : ''}during the answer)`, null, code);
        }
        if (typeof j.model === 'string' && j.model) answer.model = j.model;
        if (j.usage) answer.usage = usageOf(j.usage) ?? answer.usage;
        const choice = Array.isArray(j.choices) && isObj(j.choices[0]) ? j.choices[0] : undefined;
        const delta = choice && isObj(choice.delta) ? choice.delta : undefined;
        const piece = typeof delta?.content === 'string' ? delta.content : typeof delta?.refusal === 'string' ? delta.refusal : '';
        if (piece) {
          answer.ttfbMs ??= performance.now() - t0;
          answer.text += piece;
          onDelta(piece);
        }
        if (choice && typeof choice.finish_reason === 'string') answer.finishReason = choice.finish_reason;
        return false;
      };
      let done = false;
      try {
        for await (const chunk of res.body) {
          for (const ev of parser.push(chunk)) if (handle(ev.data)) done = true;
          if (done) break;
        }
        if (!done) for (const ev of parser.end()) handle(ev.data);
      } catch (e) {
        if (e instanceof ChatRequestError || signal?.aborted) throw e;
        throw new ChatRequestError(`the answer broke off: ${(e as Error).message}`);
      }
      answer.ms = performance.now() - t0;
      return answer;
    },
    async models(signal) {
      const url = base();
      let res: Response;
      try {
        res = await fetcher()(`${url}/v1/models`, { headers, signal: signal ?? AbortSignal.timeout(30_000) });
      } catch (e) { throw networkError(url, e); }
      const text = await res.text();
      if (!res.ok) throw new ChatRequestError(errorLine(res.status, text), res.status);
      let j: unknown;
      try { j = JSON.parse(text); } catch { throw new ChatRequestError('the gateway sent a model list that is not JSON'); }
      const data = isObj(j) && Array.isArray(j.data) ? j.data : [];
      return data.flatMap((m) => (isObj(m) && typeof m.id === 'string' ? [m.id] : []));
    },
  };
}
