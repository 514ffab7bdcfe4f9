// What a wire protocol fixes for every provider that speaks it, as data: the headers its calls
// carry, where a native request names its model, and which error shape its doors answer in.
import type { ProtocolId } from './ir/protocol.js';
import { ANTHROPIC_VERSION } from './protocols/anthropic/constants.js';

/** The error body shapes the gateway speaks (see src/daemon/errors.ts). */
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
}

export const PROTOCOL_FACTS: Readonly<Record<ProtocolId, ProtocolFacts>> = {
  'openai-chat': { defaultHeaders: {}, modelIn: 'body', errorShape: 'openai', mainPath: '/v1/chat/completions' },
  'openai-responses': { defaultHeaders: {}, modelIn: 'body', errorShape: 'openai', mainPath: '/v1/responses' },
  anthropic: { defaultHeaders: { 'anthropic-version': ANTHROPIC_VERSION }, modelIn: 'body', errorShape: 'anthropic', mainPath: '/v1/messages' },
  gemini: { defaultHeaders: {}, modelIn: 'path', errorShape: 'gemini', mainPath: '/v1beta/models/{model}:generateContent', badKey400: /api key/i },
};
