// A loopback port nothing listens on (for "unreachable" cases): one the OS handed out and took back.
import { createServer, type AddressInfo } from 'node:net';

export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
