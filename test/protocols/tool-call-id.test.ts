// The tool-call ids all doors show their clients (src/providers/protocols/tool-call-id.ts): provider
// ids kept where the door's clients take them, state carried in the id, ids minted for calls the
// provider gave none, and every id we issued read back as the call it names.
import { describe, expect, it } from 'vitest';
import { decodeToolCallId, encodeToolCallId, readToolCallId } from '../../src/providers/protocols/tool-call-id.js';

describe('tool-call ids', () => {
  const sig = 'CiQBeJs0yvVPLiIKzZQecbiNWDaGbQ2Fi2NUnpS+LKzGf1t+8o8tmQOVn2PT2JPc51J3nIQWKRfsj/GvSmQi02fhjV6236RlpTMfdY55PqlalOsNFbYqkqcJpZOkTtInlmLjlUWAw1GpBLoW6Fa6uZQx4GrZajoe';

  it('keeps a provider id with no state unchanged', () => {
    expect(encodeToolCallId('toolu_01A', undefined, 'chatcmpl-1', 0)).toBe('toolu_01A');
    expect(decodeToolCallId('toolu_01A')).toBeUndefined();
    expect(decodeToolCallId('call_abc')).toBeUndefined();
  });

  it('writes Gemini state in the gmn1_ form the Gemini translator issued, and reads those ids back', () => {
    const minted = 'gmn1_schatcmplfallback01n0_bCiQBeJs0yvVPLiIKzZQecbiNWDaGbQ2Fi2NUnpS-LKzGf1t-8o8tmQOVn2PT2JPc51J3nIQWKRfsj_GvSmQi02fhjV6236RlpTMfdY55PqlalOsNFbYqkqcJpZOkTtInlmLjlUWAw1GpBLoW6Fa6uZQx4GrZajoe';
    expect(encodeToolCallId('', { provider: 'gemini', data: { thoughtSignature: sig } }, 'chatcmpl-fallback01', 0)).toBe(minted);
    expect(decodeToolCallId(minted)).toEqual({ state: { provider: 'gemini', data: { thoughtSignature: sig } } });
    expect(encodeToolCallId('e5f6g7h8', { provider: 'gemini', data: { id: 'e5f6g7h8' } }, 'x', 1)).toBe('gmn1_re5f6g7h8');
    expect(decodeToolCallId('gmn1_re5f6g7h8')).toEqual({ id: 'e5f6g7h8', state: { provider: 'gemini', data: { id: 'e5f6g7h8' } } });
    expect(decodeToolCallId('gmn1_schatcmplfallback01n1')).toEqual({ state: { provider: 'gemini', data: {} } });
  });

  it('round-trips any provider state and any id in the gw1_ form, in characters Anthropic accepts', () => {
    const cases: Array<[string, { provider: string; data: Record<string, string> } | undefined]> = [
      ['rs_1', { provider: 'openai', data: { encryptedContent: 'gAAA+/==' } }],
      ['weird id/é', { provider: 'vertex', data: { thoughtSignature: 'x', id: 'weird id/é' } }],
      ['gmn1_looks_like_ours', undefined],
      ['', undefined],
    ];
    for (const [id, state] of cases) {
      const chatId = encodeToolCallId(id, state, 'chatcmpl-9', 4);
      expect(chatId).toMatch(/^[A-Za-z0-9_-]+$/);
      const decoded = decodeToolCallId(chatId);
      expect(decoded).toEqual({ ...(id === '' ? {} : { id }), ...(state ? { state } : {}) });
    }
  });

  it('mints a distinct id for each call without one, that stands for its call when it comes back', () => {
    const ids = [0, 1].map((k) => encodeToolCallId('', undefined, 'msg_0a1b2c', k));
    expect(ids).toEqual(['gw1_smsg0a1b2cn0', 'gw1_smsg0a1b2cn1']);
    expect(ids.map(readToolCallId)).toEqual([{ id: 'gw1_smsg0a1b2cn0' }, { id: 'gw1_smsg0a1b2cn1' }]);
  });

  it('escapes the provider ids a door\'s clients cannot take as they are, and reads them back', () => {
    const anthropicIds = /^(?!toolu_gw_)[a-zA-Z0-9_-]+$/;
    expect(encodeToolCallId('toolu_01A', undefined, 'msg_1', 0, anthropicIds)).toBe('toolu_01A');
    for (const id of ['call 1/with:odd chars', 'toolu_gw_looks_like_ours', 'fc.91']) {
      const shown = encodeToolCallId(id, undefined, 'msg_1', 0, anthropicIds);
      expect(shown).toMatch(anthropicIds);
      expect(readToolCallId(shown)).toEqual({ id });
    }
    // Chat and Responses clients take any id.
    expect(encodeToolCallId('fc.91', undefined, 'chatcmpl-1', 0)).toBe('fc.91');
  });

  it('reads a client\'s own id as itself, and one we issued with state as the provider\'s id and state', () => {
    expect(readToolCallId('call_abc')).toEqual({ id: 'call_abc' });
    expect(readToolCallId('gmn1_re5f6g7h8')).toEqual({ id: 'e5f6g7h8', state: { provider: 'gemini', data: { id: 'e5f6g7h8' } } });
  });

  it('does not read an altered id as ours', () => {
    for (const id of ['gmn1_xabc', 'gmn1_rab-c', 'gmn1_hzz', 'gmn1_rabc_q', 'gw1_rabc_!!', 'gw1_rabc_bm90IGpzb24', 'gw1_']) expect(decodeToolCallId(id)).toBeUndefined();
  });
});
