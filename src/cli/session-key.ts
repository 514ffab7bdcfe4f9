// The key `gateway chat` and `gateway run` hand to their client: a short-lived one from the running
// daemon, over the admin channel `status` and `stop` use (see src/daemon/access/session-keys.ts). Nothing
// is stored on this side, so they work the same with a keychain or without one. We renew its lease
// while we run and end it when we are done; if we are killed, it expires by itself.
import { CliError } from './common.js';
import { AdminError, adminRequest, findDaemon, notRunningMessage } from './daemon-client.js';
import { gatewayCmd } from './invocation.js';
import { withKeyStore } from './key-store.js';

export type SessionPurpose = 'chat' | 'run';

export interface SessionKey {
  key: string;
  id: string;
  name: string;
  /** Ends the key (idempotent): the daemon deletes it, or we do when no daemon answers. */
  end(): Promise<void>;
}

interface Created { id: string; name: string; key: string; expiresAt: string; leaseMs: number }

export async function openSessionKey(dir: string, purpose: SessionPurpose): Promise<SessionKey> {
  if (!findDaemon(dir)) throw new CliError(notRunningMessage());
  let created: Created;
  try {
    created = await adminRequest<Created>(dir, 'POST', 'session-keys', 5_000, { purpose });
  } catch (e) {
    if (e instanceof AdminError && e.status === 404) throw new CliError(`the running gateway is older than this CLI and gives no short-lived keys; restart it: ${gatewayCmd('stop')} && ${gatewayCmd('start')}`);
    throw new CliError(`cannot get a key from the running gateway: ${(e as Error).message}`);
  }
  const { id } = created;
  // A third of the lease: two renewals may fail (a daemon restart, a busy moment) before it lapses.
  const timer = setInterval(() => {
    adminRequest(dir, 'POST', `session-keys/${id}/renew`).catch((e: unknown) => {
      if (e instanceof AdminError && e.status === 404) clearInterval(timer); // revoked: leave it so
    });
  }, Math.max(1_000, Math.floor(created.leaseMs / 3)));
  timer.unref();
  let ending: Promise<void> | undefined;
  return {
    key: created.key, id, name: created.name,
    end() {
      clearInterval(timer);
      ending ??= adminRequest(dir, 'DELETE', `session-keys/${id}`, 2_000).then(
        () => undefined,
        () => withKeyStore(dir, (store) => store.removeSession(id)).then(() => undefined, () => { /* it expires by itself */ }),
      );
      return ending;
    },
  };
}

/**
 * For the lifetime of an interactive command: SIGTERM or SIGHUP (a closed terminal) end the key
 * before the process exits as the signal would have ended it. Returns the function that removes
 * the handlers.
 */
export function endOnSignals(session: SessionKey): () => void {
  const handlers = ([['SIGTERM', 15], ['SIGHUP', 1]] as const).map(([sig, n]) => {
    const h = () => { void session.end().finally(() => process.exit(128 + n)); };
    process.once(sig, h);
    return [sig, h] as const;
  });
  return () => { for (const [sig, h] of handlers) process.off(sig, h); };
}
