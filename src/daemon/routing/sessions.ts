// Session affinity: the requests of one session stay on the target that last served it while it
// is healthy, so what the provider keeps for the conversation stays valid (thinking and thought
// signatures, encrypted reasoning, its prompt cache). A session that had to fall back stays on the
// fallback for a cool-down instead of flapping back at the first chance; after it, the route's
// own order applies again. The session is what the client names: Claude Code's
// `x-claude-code-session-id`, Codex's `session-id` / `session_id`, an explicit `x-gateway-session`,
// else the body's `prompt_cache_key`; none, no affinity.
import type { IncomingHttpHeaders } from 'node:http';

/** Sessions remembered at most (the oldest go first): bounded whatever clients send. */
const MAX_SESSIONS = 10_000;

export function sessionOf(headers: IncomingHttpHeaders, body: Record<string, unknown>): string | undefined {
  for (const name of ['x-gateway-session', 'x-claude-code-session-id', 'session-id', 'session_id']) {
    const v = headers[name];
    if (typeof v === 'string' && v !== '') return v.slice(0, 200);
  }
  const key = body.prompt_cache_key;
  return typeof key === 'string' && key !== '' ? key.slice(0, 200) : undefined;
}

export class Sessions {
  /** session → the target it stays on (`provider/model`), and until when (a fallback's cool-down). */
  private readonly sticky = new Map<string, { target: string; until: number }>();
  /** session → target → the key label of a pool that last served it (kept while that key is healthy). */
  private readonly keys = new Map<string, Map<string, string>>();
  constructor(private readonly clock: () => number) {}

  /** The target this session should start on, if it is still held there. */
  preferred(session: string): string | undefined {
    const s = this.sticky.get(session);
    if (!s) return undefined;
    if (this.clock() >= s.until) { this.sticky.delete(session); return undefined; }
    return s.target;
  }

  /** The key label that last served this session on `target`, if any. */
  key(session: string, target: string): string | undefined {
    return this.keys.get(session)?.get(target);
  }

  /** The session was served by `target` (with the pool key `label`, '' for none); `first`: the route's own first target. */
  served(session: string, target: string, first: string, cooldownMs: number, label = ''): void {
    if (label !== '') {
      let byTarget = this.keys.get(session);
      if (!byTarget) {
        byTarget = new Map();
        this.keys.set(session, byTarget);
        if (this.keys.size > MAX_SESSIONS) this.keys.delete(this.keys.keys().next().value!);
      }
      byTarget.set(target, label);
    }
    const held = this.sticky.get(session);
    if (target === first && held === undefined) return;
    // Served where it already was held: the hold is renewed; moved by a fallback: held there now.
    if (target === first && held !== undefined && held.target !== target) { this.sticky.delete(session); return; }
    this.sticky.delete(session); // re-inserted: the Map's order is the eviction order
    this.sticky.set(session, { target, until: this.clock() + cooldownMs });
    if (this.sticky.size > MAX_SESSIONS) this.sticky.delete(this.sticky.keys().next().value!);
  }
}
