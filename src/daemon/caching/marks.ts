// What the gateway adds to an upstream call so the provider's prompt cache works for clients that
// cannot ask for it themselves (config.json `cache`, settings.ts):
// - Anthropic-protocol providers that cache only up to marked breakpoints (Anthropic, and an added
//   provider whose preset or `cache.providers` entry says so) get the builder's automatic
//   breakpoints when the request came by a door whose clients could not mark (Chat, Responses,
//   Gemini). Messages clients mark their own, and their requests to such a provider go the fast
//   path untouched.
// - Providers that take OpenAI's `prompt_cache_key` get a stable one derived from the session the
//   client names (routing/sessions.ts), unless the client set its own.
import { createHash } from 'node:crypto';
import type { Target } from '../../providers/ir/protocol.js';
import { cacheMinimum } from '../../providers/registry.js';
import type { DoorRun } from '../doors/door.js';
import { sessionOf } from '../routing/sessions.js';
import { DEFAULT_CACHE } from './settings.js';

/** The automatic breakpoints for this attempt's Anthropic call (the Target's `cache`), if any go. */
export function breakpointsFor(run: DoorRun): Target['cache'] {
  const { door, route } = run;
  if (route.protocol !== 'anthropic' || door.protocol === 'anthropic') return undefined;
  const s = run.ctx.settings.cache ?? DEFAULT_CACHE;
  const own = s.providers[route.p.id];
  if (!(own?.breakpoints ?? (s.breakpoints && route.p.cacheBreakpoints !== undefined))) return undefined;
  return { minTokens: cacheMinimum(route.p, route.model), ttl: own?.ttl ?? s.ttl };
}

/**
 * The `prompt_cache_key` this attempt's provider gets, for one that takes it (OpenAI, or an added
 * provider whose `cache.providers` entry says so): the client's own, else one derived from the
 * session it names. A hash, so the session id itself never leaves the gateway; the proxy key's id
 * is part of it, so two keys naming the same session do not share a cache route.
 */
export function promptCacheKeyFor(run: DoorRun): string | undefined {
  const { route } = run;
  // A field of OpenAI's two protocols only (and the Gemini door's fast path has not read its body).
  if (route.protocol !== 'openai-chat' && route.protocol !== 'openai-responses') return undefined;
  const s = run.ctx.settings.cache ?? DEFAULT_CACHE;
  const own = s.providers[route.p.id]?.promptCacheKey;
  if (route.p.promptCacheKey !== true && own !== true) return undefined;
  const theirs = run.body.prompt_cache_key;
  if (typeof theirs === 'string' && theirs !== '') return theirs;
  if (!(own ?? s.promptCacheKey)) return undefined;
  const session = sessionOf(run.req.headers, {});
  return session === undefined ? undefined : `gateway-${createHash('sha256').update(`${run.key.id}\n${session}`).digest('hex').slice(0, 32)}`;
}
