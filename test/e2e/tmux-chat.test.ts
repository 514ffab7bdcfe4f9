// `gateway chat` in a real terminal (tmux) against a real background daemon with mock providers:
// an answer streams onto the screen, /model switches provider mid-conversation with the history
// kept, Ctrl-C stops an answer (and its upstream request) without leaving, a daemon restart is
// survived, Ctrl-D leaves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_BIN } from '../helpers/cli.js';
import { MOCK_TEXT } from '../helpers/mock-provider.js';
import { startRealGateway, type RealGateway } from '../ui/real-gateway.js';
import { slowOpenAI, words } from '../ui/slow-streams.js';
import { hasTmux, Tmux } from './tmux.js';

const tmux = new Tmux();
let gw: RealGateway;

beforeAll(async () => { if (hasTmux) gw = await startRealGateway(); }, 30_000);
afterAll(async () => {
  tmux.kill();
  await gw?.stop();
});

function send(text: string): void {
  tmux.type('chat', text);
  tmux.keys('chat', 'Enter');
}

describe.skipIf(!hasTmux)('gateway chat in tmux', () => {
  it('streams an answer token by token onto the screen', async () => {
    tmux.start('chat', [process.execPath, GATEWAY_BIN, 'chat', '--model', 'openai/gpt-5.4'], { GATEWAY_HOME: gw.home, ...gw.env });
    await tmux.waitFor('chat', (s) => s.includes('message, or /help') && s.includes('openai/gpt-5.4  no answer yet'), 'the chat prompt');
    gw.mocks.openai.setHandler(slowOpenAI({ delayMs: 120, pieces: ['Streaming ', 'answer: ', ...words(12), '\n', '```sh\n', 'echo done\n', '```\n', 'The end.'] }));
    send('Tell me something');
    // Part of the answer on screen while the rest is still coming.
    const partial = await tmux.waitFor('chat', (s) => /Streaming answer: word1 word2/.test(s) && !s.includes('The end.'), 'a partial answer');
    expect(partial).toMatch(/openai\/gpt-5\.4 · ~\d+ chunks · [\d.]+m?s\s+·\s+ctrl-c stops/);
    const done = await tmux.waitFor('chat', (s) => s.includes('The end.') && s.includes('last answer'), 'the whole answer');
    expect(done).toContain('› Tell me something');
    expect(done).toMatch(/Streaming answer: word1 word2 .* word12\s*\n╭─ sh ─+\n│ echo done\n╰─+\nThe end\./);
    expect(done).toMatch(/openai\/gpt-5\.4\s+last answer 9 in \/ 19 out tokens · [\d.]+s · [\d.]+ tok\/s/);
    gw.mocks.openai.setHandler(undefined);
  });

  it('/model switches to another provider and keeps the conversation', async () => {
    send('/model anthropic/claude-opus-5');
    await tmux.waitFor('chat', (s) => s.includes('model: anthropic/claude-opus-5 (the conversation so far goes with it)'), 'the switch');
    const before = gw.mocks.anthropic.requests.length;
    send('And now from Claude?');
    await tmux.waitFor('chat', (s) => s.includes(MOCK_TEXT) && /anthropic\/claude-opus-5\s+last answer 12 in \/ 5 out tokens/.test(s), 'the answer from anthropic');
    expect(gw.mocks.anthropic.requests.length).toBe(before + 1);
    const sent = JSON.parse(gw.mocks.anthropic.requests.at(-1)!.body.toString()) as { model: string; messages: Array<{ role: string; content: unknown }> };
    expect(sent.model).toBe('claude-opus-5');
    expect(sent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent.messages[1])).toContain('The end.');
  });

  it('Ctrl-C stops an answer and its upstream request, the chat goes on; Ctrl-D leaves', async () => {
    send('/model openai/gpt-5.4');
    await tmux.waitFor('chat', (s) => s.includes('model: openai/gpt-5.4'), 'switched back');
    const tale = Array.from({ length: 60 }, (_, i) => `tale${i + 1} `);
    gw.mocks.openai.setHandler(slowOpenAI({ delayMs: 150, pieces: tale }));
    const before = gw.mocks.openai.requests.length;
    send('A very long story');
    await tmux.waitFor('chat', (s) => s.includes('tale3') && s.includes('ctrl-c stops'), 'the story streaming');
    tmux.keys('chat', 'C-c');
    await tmux.waitFor('chat', (s) => /tale\d+\s*\n\(stopped\)/.test(s) && s.includes('message, or /help'), 'stopped, prompt back');
    await expect.poll(() => gw.mocks.openai.requests[before]?.aborted, { timeout: 5000 }).toBe(true);
    expect(tmux.screen('chat')).not.toContain('tale60');
    gw.mocks.openai.setHandler(undefined);
    send('still there?');
    await tmux.waitFor('chat', (s) => s.split(MOCK_TEXT).length >= 2 && s.includes('› still there?'), 'the chat goes on');
    // The daemon restarts on another port (GATEWAY_PORT=0): the chat finds it again.
    await gw.restart();
    send('after the restart?');
    await tmux.waitFor('chat', (s) => s.split(MOCK_TEXT).length >= 3 && s.includes('› after the restart?'), 'an answer from the restarted daemon');
    tmux.keys('chat', 'C-d');
    await tmux.waitFor('chat', (s) => s.includes('[exited 0]'), 'left with exit 0');
  });
});
