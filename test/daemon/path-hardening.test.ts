// A native path that some server could normalise into a different path (dot segments, `..;`,
// backslashes, percent-encoded `.`, `/`, `\`) is refused with a 400 in the prefix's own error
// shape, and nothing is sent upstream. Requests go out with node:http, which sends the path as
// written (fetch would resolve the dot segments itself).
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const upstreamCount = () => gw.mocks.anthropic.requests.length + gw.mocks.openai.requests.length + gw.mocks.gemini.requests.length;

function send(method: string, path: string, body?: string): Promise<{ status: number; json: any }> {
  const u = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers: { authorization: `Bearer ${gw.key}`, 'x-api-key': gw.key, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => { try { resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }); } catch (e) { reject(new Error(`not JSON: ${text}`)); } });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The message of a 400 invalid_request in the prefix's own error shape. */
function invalidRequestMessage(path: string, json: any): string {
  if (path.startsWith('/anthropic/')) {
    expect(json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    return json.error.message;
  }
  if (path.startsWith('/gemini/')) {
    expect(json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    return json.error.message;
  }
  expect(json).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_request', param: null } });
  return json.error.message;
}

const REFUSED = [
  '/openai/..;/admin/keys',
  '/openai/v1/..;/..;/admin/keys',
  '/openai/v1/chat/completions/..',
  '/openai/v1/..:models',
  '/openai/v1/chat..completions',
  '/openai/v1/./chat/completions',
  '/openai/v1/.;/chat/completions',
  '/openai/v1/chat/completions/.',
  '/openai/v1\\chat\\completions',
  '/openai/v1/%2e/chat/completions',
  '/openai/v1/chat%2Fcompletions',
  '/openai/v1/chat%5ccompletions',
  '/openai/v1//chat/completions',
  '/anthropic/../admin/status',
  '/anthropic/v1/messages/..;',
  '/anthropic/v1/%2E%2E/admin/status',
  '/anthropic/v1%5Cmessages',
  '/anthropic/v1/./messages',
  '/gemini/v1beta/models/%2e%2e:generateContent',
  '/gemini/v1beta/models/..:generateContent',
  '/gemini/v1beta/models/gemini-3.5-flash%2F..%2F..:generateContent',
  '/gemini/v1beta/models/gemini..x:generateContent',
  '/gemini/v1beta/./models/gemini-3.5-flash:generateContent',
  '/gemini/v1beta\\models\\gemini-3.5-flash:generateContent',
  '/gemini/v1beta/models/%ZZ:generateContent',
  '/gemini/v1beta/models/%ff:generateContent',
];

describe('native paths that could be read as another path', () => {
  for (const path of REFUSED) {
    it(`refuses ${path} with a 400 in its prefix's shape, sending nothing upstream`, async () => {
      const before = upstreamCount();
      const r = await send('POST', `${path}?alt=sse`, '{}');
      expect(r.status).toBe(400);
      expect(invalidRequestMessage(path, r.json)).toMatch(/path/);
      expect(upstreamCount()).toBe(before);
    });
  }
});

describe('ordinary native paths still go through', () => {
  it('single dots inside names and ids, a colon method, a trailing slash', async () => {
    const before = upstreamCount();
    const g = await send('POST', '/gemini/v1beta/models/gemini-3.5-flash:generateContent', '{"contents":[{"parts":[{"text":"x"}]}]}');
    expect(g.status).toBe(200);
    const o = await send('GET', '/openai/v1/models/gpt-5.4');
    expect(o.status).toBe(404); // the mock's own answer: it reached the provider
    expect(gw.mocks.openai.requests.at(-1)!.url).toBe('/v1/models/gpt-5.4');
    const a = await send('POST', '/anthropic/v1/messages/count_tokens/', '{}');
    expect(gw.mocks.anthropic.requests.at(-1)!.url).toBe('/v1/messages/count_tokens/');
    expect(a.status).toBe(404);
    expect(upstreamCount()).toBe(before + 3);
  });
});

describe('the Gemini door at the root: only the model id is exempt, and it never becomes a path unchecked', () => {
  it.each([
    ['/v1beta/./models/gemini-3.5-flash:generateContent', /path/],
    ['/v1beta/files/%2e%2e', /path/],
    ['/v1beta/models/%ZZ:generateContent', /percent-encoding/],
    ['/v1beta/models/gemini%2F%00x:generateContent', /control character/],
    ['/v1beta/models/gemini%2F..%2F..%2Fadmin%2Fkeys:generateContent', /not a Gemini model id/],
    ['/v1/models/gemini/../../admin/keys:streamGenerateContent', /not a Gemini model id/],
  ])('refuses %s with a 400 in Google\'s shape, sending nothing upstream', async (path, why) => {
    const before = upstreamCount();
    const r = await send('POST', `${path}?alt=sse`, '{"contents":[{"parts":[{"text":"x"}]}]}');
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    expect(r.json.error.message).toMatch(why);
    expect(upstreamCount()).toBe(before);
  });

  it('a foreign model id with dots or slashes is only a name to look up', async () => {
    const r = await send('POST', '/v1beta/models/anthropic/..%2F..%2Fv1%2Fmessages:generateContent', '{"contents":[{"parts":[{"text":"x"}]}]}');
    expect(r.status).toBe(200); // Anthropic's model "../../v1/messages", sent in the body only
    expect(gw.mocks.anthropic.requests.at(-1)!.url).toBe('/v1/messages');
    expect(JSON.parse(gw.mocks.anthropic.requests.at(-1)!.body.toString()).model).toBe('../../v1/messages');
  });
});
