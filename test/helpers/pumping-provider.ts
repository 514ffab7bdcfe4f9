// A provider on loopback that writes its answer as fast as the connection takes it and counts what
// it wrote, for the tests that a client which stops reading holds the provider back (the gateway
// passes the back-pressure on instead of buffering the answer).
import { createServer, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventBus } from '../../src/daemon/observe/events.js';

export interface PumpingProvider {
  origin: string;
  /** Bytes written so far. */
  readonly written: number;
  /** The whole answer has been written. */
  readonly finished: boolean;
  /**
   * Resolves once the provider is held back: its last write found the connection full, and for
   * `quietMs` neither has a `drain` come nor has the gateway relayed anything (`relayedAt`).
   * Also resolves when the provider has written everything, which a gateway that buffers lets it
   * do; the test's assertions then say what went wrong.
   *
   * The gateway's side is needed because the provider's own view lags: a full loopback connection
   * reopens only after the reader has taken megabytes, so a gateway that keeps reading slowly
   * can leave the provider without a `drain` for seconds.
   */
  heldBack(relayedAt: () => number, opts?: { quietMs?: number; timeoutMs?: number }): Promise<void>;
  close(): Promise<void>;
}

/** `pieces` is called once per request; each piece is one write. */
export async function startPumpingProvider(headers: OutgoingHttpHeaders, pieces: () => Iterator<string | Buffer>): Promise<PumpingProvider> {
  let written = 0;
  let finished = false;
  let blocked = false;
  let lastWrite = Date.now();
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, headers);
    const it = pieces();
    const pump = () => {
      lastWrite = Date.now();
      blocked = false;
      for (let n = it.next(); !n.done; n = it.next()) {
        written += Buffer.byteLength(n.value);
        if (!res.write(n.value)) { blocked = true; res.once('drain', pump); return; }
      }
      finished = true;
      res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get written() { return written; },
    get finished() { return finished; },
    async heldBack(relayedAt, { quietMs = 300, timeoutMs = 10_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      const quiet = () => blocked && Date.now() - Math.max(lastWrite, relayedAt()) >= quietMs;
      while (!finished && !quiet()) {
        if (Date.now() > deadline) throw new Error(`the provider was neither held back nor done after ${timeoutMs} ms (${written} bytes written)`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/**
 * When the gateway last relayed bytes to a client, from its `progress` events (published at most
 * every PROGRESS_INTERVAL_MS while bytes flow, so a quiet window must be longer than that).
 */
export function relayActivity(bus: EventBus): { at: () => number; close(): void } {
  let at = Date.now();
  const close = bus.subscribe((e) => { if (e.type === 'progress' || e.type === 'first_byte') at = Date.now(); });
  return { at: () => at, close };
}
