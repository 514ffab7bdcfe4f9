// A Responses conversation that outlives the daemon: an answer translated from Anthropic is stored,
// the real daemon process is stopped and started again on the same state directory with the CLI
// (`gateway stop`, `gateway start`), and the next turn's previous_response_id still brings the
// earlier exchange to the provider. The openai SDK is the client; nothing of ours is mocked.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';
import { FINAL_TEXT, anthropicScript } from '../helpers/scripted-providers.js';

let gw: GatewayProcess;
let key = '';
beforeAll(async () => {
  gw = await startGatewayProcess();
  gw.mocks.anthropic.setHandler(anthropicScript);
  key = (await gw.cli(['keys', 'create', '--name', 'restart'])).stdout.trim();
  expect(key).toMatch(/^sk-proxy-/);
}, 60_000);
afterAll(async () => { await gw?.close(); });

const model = 'anthropic/claude-sonnet-4-5';
const sdk = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
const upstreamBody = () => JSON.parse(gw.mocks.anthropic.requests.at(-1)!.body.toString('utf8')) as { system?: unknown; messages: Array<{ role: string; content: unknown }> };
const text = (content: unknown): string => (typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((c) => c.text ?? '').join(''));

describe('previous_response_id across a daemon restart', () => {
  it('the stored answer is read back from the state directory and its conversation sent upstream', async () => {
    const first = await sdk(gw.url).responses.create({ model, instructions: 'Be brief.', input: 'My name is Ada. Remember it.' });
    expect(first.output_text).toBe(FINAL_TEXT);
    const firstPid = gw.pid;

    const stopped = await gw.cli(['stop']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(gw.alive()).toBe(false);
    const started = await gw.cli(['start', '--port', '0']);
    const m = /gateway running at (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)/.exec(started.stdout);
    expect(m, `${started.stdout}${started.stderr}`).not.toBeNull();
    expect(Number(m![2])).not.toBe(firstPid);
    const client = sdk(m![1]!);

    // Still there for the same key after the restart.
    const again = await client.responses.retrieve(first.id);
    expect(again.output_text).toBe(FINAL_TEXT);

    const before = gw.mocks.anthropic.requests.length;
    const next = await client.responses.create({ model, input: 'What is my name?', previous_response_id: first.id });
    expect(next.output_text).toBe(FINAL_TEXT);
    expect(next.previous_response_id).toBe(first.id);
    expect(gw.mocks.anthropic.requests.length).toBe(before + 1);
    const sent = upstreamBody();
    expect(sent.messages.map((t) => t.role)).toEqual(['user', 'assistant', 'user']);
    expect(text(sent.messages[0]!.content)).toBe('My name is Ada. Remember it.');
    expect(text(sent.messages[1]!.content)).toBe(FINAL_TEXT);
    expect(text(sent.messages[2]!.content)).toBe('What is my name?');
    // instructions are not carried over from the previous response (OpenAI's rule).
    expect(JSON.stringify(sent.system ?? '')).not.toContain('Be brief.');

    // The chain goes on from the new answer, two turns back.
    await client.responses.create({ model, input: 'And again?', previous_response_id: next.id });
    expect(upstreamBody().messages.map((t) => text(t.content))).toEqual(['My name is Ada. Remember it.', FINAL_TEXT, 'What is my name?', FINAL_TEXT, 'And again?']);
  }, 60_000);
});
