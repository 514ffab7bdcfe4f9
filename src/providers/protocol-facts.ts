// What a wire protocol fixes for every provider that speaks it, as data: the headers its calls
// carry, where a native request names its model, and which error shape its doors answer in.
import type { ProtocolId } from './ir/protocol.js';
import { ANTHROPIC_VERSION } from './protocols/anthropic/constants.js';

/** Where a client may put its proxy key (Bearer always, plus each SDK's default spot). */
export type KeyPlacement = 'bearer' | 'x-api-key' | 'x-goog-api-key' | 'query';

/** The error body shapes the gateway speaks (see src/daemon/http/errors.ts). */
export type ErrorShape = 'openai' | 'anthropic' | 'gemini';

export interface ProtocolFacts {
  /** Headers every call in this protocol carries unless the client set its own. */
  readonly defaultHeaders: Readonly<Record<string, string>>;
  /** Where a native request names its model: the JSON body's `model`, or the path (`/models/{m}:…`). */
  readonly modelIn: 'body' | 'path';
  readonly errorShape: ErrorShape;
  /** The main path of its API, shown as the native path under a provider's prefix. */
  readonly mainPath: string;
  /** Besides 401/403, how an answer says the key is wrong (Gemini: 400 API_KEY_INVALID). */
  readonly badKey400?: RegExp;
  /**
   * The version segment its base URLs end in, for protocols whose SDKs take a base URL that
   * includes the version (OpenAI's `…/v1`): a path's leading segment stands for the whole base
   * path (registry.ts `upstreamPath`). Absent: base URLs are roots the SDK appends `/v1/…` to.
   */
  readonly baseVersion?: string;
  /**
   * Where this protocol's clients put the proxy key, first match wins: its doors and every native
   * prefix of a provider that speaks it take it there. Only Gemini's put it in the query (`?key=`);
   * every prefix strips that parameter before forwarding (http-util's upstreamQuery).
   */
  readonly clientKeyPlacements: readonly KeyPlacement[];
  /** For a provider added with this protocol: how its key is sent, its models path. */
  readonly providerDefaults: {
    readonly auth: { readonly header: string; readonly scheme?: 'Bearer' };
    readonly modelsPath: string;
  };
}

export const PROTOCOL_FACTS: Readonly<Record<ProtocolId, ProtocolFacts>> = {
  'openai-chat': {
    defaultHeaders: {}, modelIn: 'body', errorShape: 'openai', mainPath: '/v1/chat/completions', baseVersion: '/v1',
    clientKeyPlacements: ['bearer'],
    providerDefaults: { auth: { header: 'authorization', scheme: 'Bearer' }, modelsPath: '/v1/models' },
  },
  'openai-responses': {
    defaultHeaders: {}, modelIn: 'body', errorShape: 'openai', mainPath: '/v1/responses', baseVersion: '/v1',
    clientKeyPlacements: ['bearer'],
    providerDefaults: { auth: { header: 'authorization', scheme: 'Bearer' }, modelsPath: '/v1/models' },
  },
  anthropic: {
    defaultHeaders: { 'anthropic-version': ANTHROPIC_VERSION }, modelIn: 'body', errorShape: 'anthropic', mainPath: '/v1/messages',
    clientKeyPlacements: ['bearer', 'x-api-key'],
    providerDefaults: { auth: { header: 'x-api-key' }, modelsPath: '/v1/models' },
  },
  gemini: {
    defaultHeaders: {}, modelIn: 'path', errorShape: 'gemini', mainPath: '/v1beta/models/{model}:generateContent', badKey400: /api key/i,
    // x-goog-api-key (both SDKs, gemini-cli), `?key=` (REST samples), Bearer (OpenAI-minded tools).
    clientKeyPlacements: ['x-goog-api-key', 'query', 'bearer'],
    providerDefaults: { auth: { header: 'x-goog-api-key' }, modelsPath: '/v1beta/models' },
  },
};
