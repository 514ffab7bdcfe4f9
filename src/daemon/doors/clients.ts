// The doors' protocol modules, loaded on first use and kept, so a request after the first waits on nothing to get one.
import type { ClientProtocol } from '../../providers/ir/protocol.js';
import type { Door } from './door.js';

const loaded = new Map<Door, ClientProtocol>();

export async function clientOf(door: Door): Promise<ClientProtocol> {
  let m = loaded.get(door);
  if (!m) { m = await door.client(); loaded.set(door, m); }
  return m;
}

/** The module if it is loaded already (the hot path's check before any await). */
export function loadedClient(door: Door): ClientProtocol | undefined {
  return loaded.get(door);
}
