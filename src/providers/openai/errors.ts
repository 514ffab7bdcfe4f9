// Errors of a provider that speaks OpenAI Chat, on the Chat door's same-protocol path: already
// OpenAI-shaped, kept as they are, except that a 401 is reworded so it cannot be mistaken for a bad
// proxy key, and a body without OpenAI's `error` wrapper (Mistral's) keeps its message.
import { unwrappedMessage } from '../protocols/openai-chat/provider/read-error.js';
import type { OpenAIErrorBody } from '../types.js';

export function fromOpenAIError(
  status: number, bodyText: string, provider: { id: string; displayName: string } = { id: 'openai', displayName: 'OpenAI' },
): { status: number; body: OpenAIErrorBody } {
  let message = `${provider.displayName} answered HTTP ${status}`;
  let type = status >= 500 ? 'server_error' : 'invalid_request_error';
  let param: string | null = null;
  let code: string | null = null;
  try {
    const parsed = JSON.parse(bodyText) as { error?: { message?: unknown; type?: unknown; param?: unknown; code?: unknown } };
    const e = parsed.error;
    if (e === undefined && typeof parsed === 'object' && parsed !== null) message = unwrappedMessage(parsed as Record<string, unknown>) ?? message;
    if (e && typeof e === 'object') {
      if (typeof e.message === 'string') message = e.message;
      if (typeof e.type === 'string') type = e.type;
      if (typeof e.param === 'string') param = e.param;
      if (typeof e.code === 'string') code = e.code;
    }
  } catch { /* not JSON: keep the generic message */ }
  if (status === 401) {
    return { status, body: { error: {
      message: `${provider.displayName} rejected the API key stored in the gateway (${message}); replace it with: gateway providers set ${provider.id}`,
      type: 'authentication_error', param: null, code: 'upstream_auth_failed',
    } } };
  }
  return { status, body: { error: { message, type, param, code } } };
}
