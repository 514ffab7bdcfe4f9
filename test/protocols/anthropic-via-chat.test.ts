// Every recorded Anthropic fixture (test/fixtures/anthropic) through the hub's two modules, the way
// /v1/chat/completions reaches an Anthropic model: Chat door → IR → Anthropic provider for the
// request; Anthropic's bytes → reader → Chat renderer for streams (the exact text a client gets,
// however the bytes are split); Anthropic's JSON → reader → Chat renderer for answers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Target } from '../../src/providers/ir/protocol.js';
import { openaiChatClient } from '../../src/providers/protocols/openai-chat/client/index.js';
import { anthropicProvider } from '../../src/providers/protocols/anthropic/provider/index.js';
import type { ChatCompletionRequest } from '../../src/providers/types.js';
import { fixtureNames, readFixtureBytes, readJson, readJsonl } from '../providers/anthropic-fixture-helpers.js';
import { chatError, cut, expectedText, readFrames, renderContext, renderStream, type Output } from './chat-composition-helpers.js';

const requestOf = (name: string) => readJson<ChatCompletionRequest>(`${name}.request.json`);

function targetFor(req: ChatCompletionRequest): Target {
  return { provider: 'anthropic', displayName: 'Anthropic', model: req.model.replace(/^anthropic\//, ''), protocol: 'anthropic' };
}

const contextFor = (req: ChatCompletionRequest) => renderContext(req.model, 'anthropic', 'chatcmpl-fixture', req.stream_options?.include_usage === true);

function streamText(name: string, pieces: Uint8Array[]): string {
  const req = requestOf(name);
  return renderStream(pieces, anthropicProvider.createStreamReader(targetFor(req)), openaiChatClient.createStreamRenderer(contextFor(req)));
}

describe('Anthropic via the Chat door: requests', () => {
  it.each(fixtureNames('.request.json'))('%s', (name) => {
    const req = requestOf(name);
    const target = targetFor(req);
    const call = anthropicProvider.buildRequest(openaiChatClient.parseRequest(req, target), target);
    expect(call).toStrictEqual(readJson(`${name}.anthropic-request.json`));
  });
});

describe('Anthropic via the Chat door: streams', () => {
  const streams = fixtureNames('.sse');

  it('covers the recorded stream cases', () => {
    expect(streams.length).toBeGreaterThanOrEqual(12);
  });

  it.each(streams)('%s renders the recorded chunks, byte for byte, closed by [DONE] unless it failed', (name) => {
    const expected = readJsonl(`${name}.chunks.jsonl`) as Output[];
    const text = streamText(name, [readFixtureBytes(`${name}.sse`)]);
    const { outputs, done } = readFrames(text);
    expect(outputs).toStrictEqual(expected);
    expect(done).toBe(!expected.some((o) => o.kind === 'error'));
    expect(text).toBe(expectedText(expected));
  });

  it.each(streams)('%s gives the same text however its bytes are split', (name) => {
    const bytes = readFixtureBytes(`${name}.sse`);
    const whole = streamText(name, [bytes]);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), (points) => {
        expect(streamText(name, cut(bytes, points))).toBe(whole);
      }),
      { numRuns: 150 },
    );
    const single = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
    expect(streamText(name, single)).toBe(whole);
  });
});

describe('Anthropic via the Chat door: non-streaming answers', () => {
  it.each(fixtureNames('.response.json'))('%s', (name) => {
    const req = requestOf(name);
    const answer = anthropicProvider.readResponse(readJson(`${name}.response.json`), targetFor(req));
    expect(openaiChatClient.renderResponse(answer, contextFor(req))).toStrictEqual(readJson(`${name}.completion.json`));
  });
});

describe('Anthropic via the Chat door: HTTP errors', () => {
  const target: Target = { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-sonnet-4-5', protocol: 'anthropic' };
  const through = (status: number, text: string) => chatError(openaiChatClient.renderError(anthropicProvider.readError(status, text, target)));
  const anthropicBody = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_011' });

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
    expect(through(status, anthropicBody(anthropicType, message))).toEqual({ status: outStatus, body: { error: { message, type, param: null, code } } });
  });

  it('401 says the gateway-stored key was rejected and how to fix it, naming the provider', () => {
    const { status, body } = through(401, anthropicBody('authentication_error', 'invalid x-api-key'));
    expect(status).toBe(401);
    expect(body.error).toMatchObject({ type: 'authentication_error', code: 'upstream_auth_failed', param: null });
    expect(body.error.message).toContain('Anthropic rejected the API key stored in the gateway');
    expect(body.error.message).toContain('gateway providers set anthropic');
    expect(body.error.message).toContain('invalid x-api-key');
    const other = chatError(openaiChatClient.renderError(anthropicProvider.readError(401, '', { ...target, provider: 'claude-proxy', displayName: 'Claude Proxy' })));
    expect(other.body.error.message).toContain('Claude Proxy rejected the API key stored in the gateway');
    expect(other.body.error.message).toContain('gateway providers set claude-proxy');
  });

  it('gives a generic message with the status when the body is not Anthropic JSON', () => {
    for (const text of ['<html>Bad Gateway</html>', '', '{"unexpected":true}', 'null']) {
      expect(through(502, text)).toEqual({ status: 502, body: { error: { message: 'Anthropic returned HTTP 502 with no readable error message.', type: 'server_error', param: null, code: null } } });
    }
    expect(through(429, 'Too Many Requests').body.error.message).toContain('429');
  });

  it('keeps undocumented statuses, typed by the body when it names a known error type', () => {
    expect(through(503, anthropicBody('overloaded_error', 'Overloaded'))).toEqual({
      status: 503, body: { error: { message: 'Overloaded', type: 'server_error', param: null, code: 'overloaded' } },
    });
    expect(through(409, anthropicBody('conflict_error', 'Conflict'))).toEqual({
      status: 409, body: { error: { message: 'Conflict', type: 'invalid_request_error', param: null, code: null } },
    });
    expect(through(409, anthropicBody('constructor', 'odd')).body.error.type).toBe('invalid_request_error');
  });
});
