// The routes under /v1/models and /v1beta/models: the model list, one model (OpenAI's, Anthropic's
// and Google's models.get), and Gemini's `models/{model}:generateContent`, `:streamGenerateContent`
// and `:countTokens`. The model id there is a lookup key (an alias, `provider/model`, a bare id),
// never an upstream path segment except on the Gemini fast path, where the door sends only a
// validated Gemini id (doors/gemini.ts). So it alone is exempt from assertPlainPath: it may hold a
// slash raw (`models/anthropic/claude-…`) or encoded (`models/anthropic%2Fclaude-…`), and is
// decoded once here. Everything else in these paths is a fixed string.
import { GatewayError } from '../http/errors.js';

export type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'countTokens';
const METHODS: ReadonlySet<string> = new Set<GeminiMethod>(['generateContent', 'streamGenerateContent', 'countTokens']);

export interface ModelRoute {
  /** `v1` is shared with OpenAI's and Anthropic's /v1/models; `v1beta` is Google's alone. */
  readonly version: 'v1' | 'v1beta';
  /** The model id, decoded; absent for the list. */
  readonly id?: string;
  /** A Gemini method after the id's last `:`; absent for models.get. */
  readonly method?: GeminiMethod;
  /** The part of the path after `/<version>/models/` as it came (for messages). */
  readonly raw?: string;
}

const PREFIX = /^\/(v1|v1beta)\/models(?:\/|$)/;

/** The model route `path` names, or undefined when it is not under /v1(beta)/models. */
export function modelRoute(path: string): ModelRoute | undefined {
  const m = PREFIX.exec(path);
  if (!m) return undefined;
  const version = m[1] as 'v1' | 'v1beta';
  const raw = path.slice(m[0].length);
  if (raw === '') return m[0].endsWith('/') ? undefined : { version }; // `/v1/models/` names nothing
  // Method names never contain `:`, and OpenAI's fine-tuned ids do (`ft:gpt-…:org::id`): the last one splits.
  const colon = raw.lastIndexOf(':');
  const suffix = colon === -1 ? '' : raw.slice(colon + 1);
  const method = METHODS.has(suffix) ? (suffix as GeminiMethod) : undefined;
  const id = decodeModelId(method ? raw.slice(0, colon) : raw);
  return method ? { version, id, method, raw } : { version, id, raw };
}

/** Whether `path` is one of Gemini's calls or under /v1beta at all (read without decoding: for the error shape). */
export function isGooglePath(path: string): boolean {
  if (path.startsWith('/v1beta/')) return true;
  const m = PREFIX.exec(path);
  return m !== null && METHODS.has(path.slice(path.lastIndexOf(':') + 1));
}

/** Whether `path` is /v1/models or under it (read without decoding: for the error shape). */
export function isModelsPath(path: string): boolean {
  return PREFIX.test(path);
}

/** The id's percent-escapes decoded; refused when they are not UTF-8 or it holds control characters. */
function decodeModelId(raw: string): string {
  let id: string;
  try { id = decodeURIComponent(raw); } catch { throw new GatewayError('invalid_request', 'malformed percent-encoding in the model id', 'model'); }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(id)) throw new GatewayError('invalid_request', 'the model id holds a control character', 'model');
  return id;
}
