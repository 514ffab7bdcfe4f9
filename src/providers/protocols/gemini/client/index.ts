// Gemini generateContent as a door of the hub (POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent for models that are not Gemini's). The daemon passes `stream: true` in
// the body for :streamGenerateContent, and `streamFormat: 'json-array'` in the render context
// when the client did not ask for `alt=sse`; :countTokens has its own reader (count-tokens.ts).
import type { ClientProtocol } from '../../../ir/protocol.js';
import { parseCountTokensRequest, renderCountTokens } from './count-tokens.js';
import { parseGenerateContentRequest } from './parse-request.js';
import { renderGoogleError } from './render-error.js';
import { renderGenerateContentResponse } from './render-response.js';
import { createGenerateContentStreamRenderer } from './render-stream.js';

export const geminiClient: ClientProtocol = {
  id: 'gemini',
  parseRequest: parseGenerateContentRequest,
  renderResponse: renderGenerateContentResponse,
  createStreamRenderer: createGenerateContentStreamRenderer,
  renderError: renderGoogleError,
  countTokens: { parseRequest: parseCountTokensRequest, render: renderCountTokens },
};

export { IGNORED_FIELDS, REFUSED_FIELDS } from './field-policy.js';
export { FOREIGN_SIGNATURE_MARK, withoutForeignSignatures } from './thought-signature.js';
