// A provider's error answer to a door's request, as the client sees it: the one place every path
// (fast, translated, count) hands its error answer to, before anything reached the client.
// On the fast path the provider's own answer goes back as it came (status, headers, body), as a
// gateway must for the clients that read it (Anthropic's gateway contract forwards error bodies
// unmodified), with two exceptions rendered in the door's shape instead: a provider refusing the
// key the gateway holds (the client would read "invalid x-api-key" as its proxy key being wrong;
// every door says the same 401, naming the provider and the command that fixes it, on the fast
// and translated paths alike), and a body that is not in the protocol's error shape at all (a
// server's plain-text 502, Mistral's unwrapped errors). A translated request's error is always
// rendered in the door's shape; `retry-after` is kept either way.
import type { ProtocolId } from '../../providers/ir/protocol.js';
import type { ProviderError } from '../../providers/ir/types.js';
import { loadedProviderSide, providerSide } from '../../providers/protocols/provider-sides.js';
import { forwardResponseHeaders } from '../http/http-util.js';
import { sendJson } from '../http/send.js';
import type { ErrorAnswer } from '../relay/relay-as-is.js';
import { clientOf } from './clients.js';
import type { Attempt, DoorRun } from './door.js';

/** An error answer as a failed attempt: its status, the wait it asked for, and how the client would get it. */
export async function failedAnswer(run: DoorRun, protocol: ProtocolId, answer: ErrorAnswer): Promise<Attempt> {
  const header = answer.headers['retry-after'];
  // Gemini says it in a RetryInfo detail instead; read only when the header is absent and the status says wait.
  const retryAfter = typeof header === 'string' && header !== '' ? header
    : answer.status === 429 || answer.status >= 500 ? (await readWith(run, protocol, answer)).retryAfter : undefined;
  return { kind: 'failed', outcome: answer.status, ...(retryAfter === undefined ? {} : { retryAfter }), deliver: () => answerError(run, protocol, answer) };
}

async function readWith(run: DoorRun, protocol: ProtocolId, answer: ErrorAnswer): Promise<ProviderError> {
  const side = loadedProviderSide(protocol) ?? await providerSide(protocol);
  return side.readError(answer.status, utf8(answer.body), run.route.target);
}

/** A transport failure before any answer (connect error, timeout before headers) as a failed attempt. */
export function failedTransport(run: DoorRun, err: unknown): Attempt {
  const ge = run.ctx.upstreams.failure(run.route.p.id, err);
  return { kind: 'failed', outcome: ge.code === 'upstream_timeout' ? 'timeout' : 'connect-error', deliver: () => Promise.reject(ge) };
}

export async function answerError(run: DoorRun, protocol: ProtocolId, answer: ErrorAnswer): Promise<void> {
  const { res, tracker, capture, door } = run;
  const side = loadedProviderSide(protocol) ?? await providerSide(protocol);
  const text = utf8(answer.body);
  const read = side.readError(answer.status, text, run.route.target);
  if (protocol === door.protocol && read.kind !== 'authentication' && inErrorShape(text)) {
    res.writeHead(answer.status, forwardResponseHeaders(answer.headers));
    res.end(answer.body);
    capture?.wrote(answer.body);
    tracker.wrote(answer.body.length);
    tracker.fail(answer.status, read.code ?? read.kind, read.message);
    return;
  }
  const header = answer.headers['retry-after'];
  const retryAfter = typeof header === 'string' && header !== '' ? header : read.retryAfter;
  const error: ProviderError = retryAfter === read.retryAfter ? read : { ...read, retryAfter: retryAfter! };
  const rendered = (await clientOf(door)).renderError(error);
  const written = sendJson(res, rendered.status, rendered.body, retryAfter === undefined ? {} : { 'retry-after': retryAfter });
  capture?.wrote(written);
  tracker.fail(rendered.status, error.code ?? error.kind, error.message);
}

/** Every protocol the gateway speaks wraps its errors in an `error` object (OpenAI's, Anthropic's, Google's). */
function inErrorShape(text: string): boolean {
  try {
    const parsed = JSON.parse(text) as unknown;
    const body = Array.isArray(parsed) ? parsed[0] : parsed; // Google's JSON-array streams wrap it once more
    return typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'object' && (body as { error?: unknown }).error !== null;
  } catch { return false; }
}

/** The body as UTF-8 text, a leading byte order mark dropped (as undici's body.text() reads it). */
export function utf8(body: Buffer): string {
  const bom = body.length > 2 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  return body.toString('utf8', bom ? 3 : 0);
}
