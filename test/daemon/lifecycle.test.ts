// Stopping the daemon: in-flight streams finish (within the drain window), new work is refused.
import { describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';

const slowStream = (n: number, delayMs: number) => () => ({
  headers: { 'content-type': 'text/event-stream' },
  chunks: Array.from({ length: n }, (_, i) => `data: {"i":${i}}\n\n`), delayMs,
});

describe('drain on stop', () => {
  it('lets an in-flight stream finish, then closes', async () => {
    const gw = await startTestGateway();
    gw.mocks.openai.setHandler(slowStream(8, 60));
    try {
      const r = await fetch(`${gw.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: '{"stream":true}' });
      const reading = r.text();
      await gw.daemon.close(10_000);
      // The whole stream arrived: close waited for it rather than cutting it.
      const text = await reading;
      expect(text.split('\n\n').filter(Boolean)).toHaveLength(8);
      await expect(fetch(`${gw.url}/healthz`)).rejects.toThrow(); // no longer listening
    } finally {
      await Promise.all([gw.mocks.anthropic.close(), gw.mocks.openai.close(), gw.mocks.gemini.close()]);
    }
  });

  it('cuts streams that outlast the drain window', async () => {
    const gw = await startTestGateway();
    // A stream that never ends: after its first chunk the provider waits forever.
    gw.mocks.openai.setHandler(() => ({ ...slowStream(3, 0)(), beforeChunk: (i) => (i === 0 ? undefined : new Promise<void>(() => {})) }));
    try {
      const r = await fetch(`${gw.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: '{"stream":true}' });
      const reading = r.text().then(() => 'complete', () => 'cut');
      await gw.daemon.close(300); // resolves at all only because the drain window ends
      expect(await reading).toBe('cut');
    } finally {
      await Promise.all([gw.mocks.anthropic.close(), gw.mocks.openai.close(), gw.mocks.gemini.close()]);
    }
  });
});
