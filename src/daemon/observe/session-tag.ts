// How the usage history and the monitor name the session a request belongs to (the one the client
// named: routing/sessions.ts sessionOf). Claude Code and Codex name theirs with a UUID, kept as it
// is so a row can be matched with the client's own transcript; any other name (an explicit
// x-gateway-session, a prompt_cache_key) could be long or hold something the user would rather not
// have stored, so only a short hash of it is kept: enough to group a session's requests, nothing to
// read back.
import { createHash } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function sessionTag(session: string | undefined): string | undefined {
  if (session === undefined) return undefined;
  if (UUID.test(session)) return session.toLowerCase();
  return `h:${createHash('sha256').update(session).digest('hex').slice(0, 16)}`;
}
