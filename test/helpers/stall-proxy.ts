// A TCP relay on loopback that can go silent: while frozen it keeps every connection open and
// accepts new ones, but passes no byte either way (held until it thaws), as a network partition or
// a hung server looks to a client. For "the store does not answer" as against "the store refused".
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface StallProxy {
  port: number;
  freeze(): void;
  /** Passes on what was held, then relays again. */
  thaw(): void;
  close(): Promise<void>;
}

export async function startStallProxy(targetPort: number): Promise<StallProxy> {
  let frozen = false;
  const flushes = new Set<() => void>();
  const sockets = new Set<Socket>();
  const relay = (from: Socket, to: Socket) => {
    const held: Buffer[] = [];
    from.on('data', (d: Buffer) => { if (frozen) held.push(d); else to.write(d); });
    const flush = () => { for (const d of held.splice(0)) to.write(d); };
    flushes.add(flush);
    from.on('close', () => { flushes.delete(flush); to.destroy(); });
  };
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) { sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s)); }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    freeze() { frozen = true; },
    thaw() { frozen = false; for (const f of flushes) f(); },
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}
