// A native request that asks for a stream in its body ("stream": true, no Accept header) is recorded
// as a stream, and daemon.log names the model the provider answered with, although the gateway
// never reads a native request's body: both come from the response. Against a real `gateway start`
// process and the mock providers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultReply } from '../helpers/mock-provider.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

interface Row { requestId: string; mode: string; provider: string; path: string; stream: boolean; model: string | null }

let gw: GatewayProcess;
let key: string;
beforeAll(async () => {
  gw = await startGatewayProcess();
  key = (await gw.cli(['keys', 'create', '--name', 'rec'])).stdout.trim();
});
afterAll(async () => { await gw?.close(); });

const messages = [{ role: 'user', content: 'hi' }];
async function send(path: string, body: unknown, auth: Record<string, string>): Promise<void> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.text();
}
async function recorded(n: number): Promise<Row[]> {
  const res = await fetch(`${gw.url}/admin/usage/requests?limit=${n}`, { headers: { authorization: `Bearer ${gw.adminToken()}` } });
  return ((await res.json()) as { rows: Row[] }).rows.reverse();
}
const logLines = () => readFileSync(join(gw.dir, 'daemon.log'), 'utf8').split('\n').filter((l) => l.includes(' -> '));

describe('native requests, recorded from their responses', () => {
  it('a stream asked for in the body alone is recorded stream: true; a whole answer stream: false', async () => {
    await send('/anthropic/v1/messages', { model: 'claude-opus-5', max_tokens: 9, stream: true, messages }, { 'x-api-key': key });
    await send('/anthropic/v1/messages', { model: 'claude-opus-5', max_tokens: 9, messages }, { 'x-api-key': key });
    await send('/openai/v1/chat/completions', { model: 'gpt-5.4', stream: true, messages }, { authorization: `Bearer ${key}` });
    await send('/openai/v1/chat/completions', { model: 'gpt-5.4', messages }, { authorization: `Bearer ${key}` });
    expect((await recorded(4)).map((r) => [r.provider, r.stream, r.model])).toEqual([
      ['anthropic', true, 'claude-opus-5'], ['anthropic', false, 'claude-opus-5'], ['openai', true, 'gpt-5.4'], ['openai', false, 'gpt-5.4'],
    ]);
  });

  it('daemon.log names the model the provider answered with, and the name asked for when it differs', async () => {
    await expect.poll(() => logLines().filter((l) => l.includes(' native/')).length, { timeout: 5000 }).toBe(4);
    const native = logLines().filter((l) => l.includes(' native/'));
    expect(native.filter((l) => l.includes('POST /v1/messages native/anthropic model=claude-opus-5 key=rec -> 200'))).toHaveLength(2);
    expect(native.filter((l) => l.includes('POST /v1/chat/completions native/openai model=gpt-5.4 key=rec -> 200'))).toHaveLength(2);
    expect(logLines().join('\n')).not.toContain('model=-');
    // A dated snapshot answering a name: both appear, the served model first.
    gw.mocks.anthropic.setHandler((r, provider) => defaultReply(provider, { ...r, body: Buffer.from(r.body.toString('utf8').replace('"claude-sonnet-4-5"', '"claude-sonnet-4-5-20250929"')) }));
    await send('/v1/chat/completions', { model: 'anthropic/claude-sonnet-4-5', stream: true, messages }, { authorization: `Bearer ${key}` });
    await expect.poll(() => logLines().some((l) => l.includes('POST /v1/chat/completions unified/anthropic model=claude-sonnet-4-5-20250929 requested=claude-sonnet-4-5 key=rec -> 200')), { timeout: 5000 }).toBe(true);
  });
});
