// Scripted daemon events for the monitor's tests: one request's life, with fixed times.
import type { GatewayEvent, RequestStarted } from '../../src/daemon/observe/events.js';

export const T0 = Date.parse('2026-11-22T10:00:00.000Z');

export function started(id: string, over: Partial<RequestStarted> = {}, at = 0): RequestStarted {
  return {
    type: 'started', id, time: T0 + at, keyId: 'k1', keyName: 'env', mode: 'unified', provider: 'openai', model: 'gpt-5.4',
    method: 'POST', path: '/v1/chat/completions', stream: true, requestBytes: 321,
    headers: { 'content-type': 'application/json', authorization: 'Bearer …wxyz', 'user-agent': 'OpenAI/JS 7.57.0' },
    ...over,
  };
}

export const firstByte = (id: string, at: number, ttfbMs = at): GatewayEvent => ({ type: 'first_byte', id, time: T0 + at, ttfbMs });

export const progress = (id: string, at: number, outputTokens: number | undefined, chunks = 5): GatewayEvent =>
  ({ type: 'progress', id, time: T0 + at, chunks, outputBytes: chunks * 100, ...(outputTokens === undefined ? {} : { outputTokens }) });

export const finished = (id: string, at: number, over: Partial<Extract<GatewayEvent, { type: 'finished' }>> = {}): GatewayEvent => ({
  type: 'finished', id, time: T0 + at, status: 200, durationMs: at, ttfbMs: 120, outputBytes: 4000,
  usage: { inputTokens: 12, outputTokens: 40 }, model: 'gpt-5.4', ...over,
});

export const failed = (id: string, at: number, status: number, code: string, message: string): GatewayEvent => ({
  type: 'failed', id, time: T0 + at, status, durationMs: at, ttfbMs: null, code, message, usage: {},
});

/** The full life of one streamed request: start → first byte → progress → finish. */
export function lifeOf(id: string, start = 0): GatewayEvent[] {
  return [started(id, {}, start), firstByte(id, start + 120, 120), progress(id, start + 600, 20), finished(id, start + 1120, { durationMs: 1120 })];
}
