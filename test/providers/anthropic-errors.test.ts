// Anthropic HTTP errors → OpenAI status and error body (provider-reference.md §4.9).
import { describe, expect, it } from 'vitest';
import { fromAnthropicError } from './via-hub.js';

const anthropicBody = (type: string, message: string) =>
  JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_011' });

describe('fromAnthropicError', () => {
  it.each([
    [400, 'invalid_request_error', 400, 'invalid_request_error', null],
    [402, 'billing_error', 402, 'insufficient_quota', 'insufficient_quota'],
    [403, 'permission_error', 403, 'permission_error', null],
    [404, 'not_found_error', 404, 'invalid_request_error', 'model_not_found'],
    [413, 'request_too_large', 413, 'invalid_request_error', 'request_too_large'],
    [429, 'rate_limit_error', 429, 'rate_limit_exceeded', 'rate_limit_exceeded'],
    [500, 'api_error', 500, 'server_error', null],
    [504, 'timeout_error', 504, 'server_error', 'timeout'],
    [529, 'overloaded_error', 503, 'server_error', 'overloaded'],
  ])('%i %s → %i %s (%s), keeping the message', (status, anthropicType, outStatus, type, code) => {
    const message = `Anthropic says ${anthropicType}`;
    expect(fromAnthropicError(status, anthropicBody(anthropicType, message))).toEqual({
      status: outStatus,
      body: { error: { message, type, param: null, code } },
    });
  });

  it('401 says the gateway-stored Anthropic key was rejected and how to fix it', () => {
    const { status, body } = fromAnthropicError(401, anthropicBody('authentication_error', 'invalid x-api-key'));
    expect(status).toBe(401);
    expect(body.error.type).toBe('authentication_error');
    expect(body.error.code).toBe('upstream_auth_failed');
    expect(body.error.param).toBeNull();
    expect(body.error.message).toContain('Anthropic rejected the API key stored in the gateway');
    expect(body.error.message).toContain('gateway providers set anthropic');
    expect(body.error.message).toContain('invalid x-api-key');
  });

  it('gives a generic message with the status when the body is not Anthropic JSON', () => {
    for (const text of ['<html>Bad Gateway</html>', '', '{"unexpected":true}', 'null']) {
      const { status, body } = fromAnthropicError(502, text);
      expect(status).toBe(502);
      expect(body.error).toEqual({ message: 'Anthropic returned HTTP 502 with no readable error message.', type: 'server_error', param: null, code: null });
    }
    expect(fromAnthropicError(429, 'Too Many Requests').body.error.message).toContain('429');
  });

  it('keeps undocumented statuses, typed by the body when it names a known error type', () => {
    expect(fromAnthropicError(503, anthropicBody('overloaded_error', 'Overloaded'))).toEqual({
      status: 503, body: { error: { message: 'Overloaded', type: 'server_error', param: null, code: 'overloaded' } },
    });
    expect(fromAnthropicError(409, anthropicBody('conflict_error', 'Conflict'))).toEqual({
      status: 409, body: { error: { message: 'Conflict', type: 'invalid_request_error', param: null, code: null } },
    });
  });
});
