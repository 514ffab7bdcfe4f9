// Every request a door has started to track finishes its record, whatever goes wrong after: an
// error thrown late (a body that cannot be read, a store that cannot be read) still ends it as a
// failure, so the monitor, `gateway status` and a drain never wait on it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { FOREIGN_SIGNATURE_MARK } from '../../src/providers/protocols/gemini/client/thought-signature.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway | undefined;
afterEach(async () => { await gw?.close(); gw = undefined; });

/** Collects the bus's events; `ended` resolves with the first failed or finished one. */
function watch(g: TestGateway): { ended: Promise<GatewayEvent> } {
  let done!: (e: GatewayEvent) => void;
  const ended = new Promise<GatewayEvent>((resolve) => { done = resolve; });
  g.daemon.ctx.bus.subscribe((e) => { if (e.type === 'failed' || e.type === 'finished') done(e); });
  return { ended };
}

it('the Gemini door fast path: a malformed body carrying the gateway\'s signature mark is a 400, and its record ends', async () => {
  gw = await startTestGateway();
  const { ended } = watch(gw);
  const body = `{"contents":[{"role":"model","parts":[{"thoughtSignature":${FOREIGN_SIGNATURE_MARK.toString('utf8')}`; // cut off: not JSON
  const r = await fetch(`${gw.url}/v1beta/models/gemini-3.5-flash:generateContent`, {
    method: 'POST', headers: { 'x-goog-api-key': gw.key, 'content-type': 'application/json' }, body,
  });
  expect(r.status).toBe(400);
  expect(((await r.json()) as { error: { status: string } }).error.status).toBe('INVALID_ARGUMENT');
  expect(await ended).toMatchObject({ type: 'failed', status: 400, code: 'invalid_request' });
  expect(gw.daemon.ctx.stats.inFlight).toBe(0);
  expect(gw.mocks.gemini.requests).toHaveLength(0);
});

it('the Responses door: a response store that cannot be read is a 500, and the record ends', async () => {
  gw = await startTestGateway();
  // Not a database: the store fails when it first opens the file to read a chain.
  writeFileSync(join(gw.dir, 'responses.db'), 'this is not a SQLite database, just text that fills the header page.'.repeat(20));
  const { ended } = watch(gw);
  const r = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'anthropic/claude-opus-5', input: 'again', previous_response_id: 'resp_0123' }),
  });
  expect(r.status).toBe(500);
  expect(((await r.json()) as { error: { type: string } }).error.type).toBe('server_error');
  expect(await ended).toMatchObject({ type: 'failed', status: 500 });
  expect(gw.daemon.ctx.stats.inFlight).toBe(0);
  // A drain has nothing to wait for.
  await gw.daemon.ctx.stats.idle(10_000);
});
