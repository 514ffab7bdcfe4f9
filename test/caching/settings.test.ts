// config.json's `cache` section: the settings it gives, every mistake named by its field (read as
// the daemon reads config.json, providers added there included), and `gateway doctor` showing
// both as a user sees them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CACHE, parseCache } from '../../src/daemon/caching/settings.js';
import { readConfig } from '../../src/daemon/store/config.js';
import { makeTempHome, runCli } from '../helpers/cli.js';

let home: { dir: string; cleanup(): void };
beforeEach(() => { home = makeTempHome('gateway-cache-config-'); });
afterEach(() => home.cleanup());
const handEdit = (c: unknown) => writeFileSync(join(home.dir, 'config.json'), JSON.stringify(c, null, 2), { mode: 0o600 });

describe('the cache section', () => {
  it('defaults to breakpoints on with a 5-minute TTL, and a session prompt_cache_key', () => {
    expect(parseCache(undefined)).toEqual({ settings: { breakpoints: true, ttl: '5m', promptCacheKey: true, providers: {} }, problems: [] });
    expect(DEFAULT_CACHE).toEqual(parseCache({}).settings);
  });

  it('reads the switches, and a provider\'s own settings under its id (google is gemini)', () => {
    const { settings, problems } = parseCache({
      breakpoints: false, ttl: '1h', promptCacheKey: false,
      providers: { anthropic: { breakpoints: true, ttl: '5m' }, OpenAI: { promptCacheKey: true }, google: {} },
    });
    expect(problems).toEqual([]);
    expect(settings).toEqual({
      breakpoints: false, ttl: '1h', promptCacheKey: false,
      providers: { anthropic: { breakpoints: true, ttl: '5m' }, openai: { promptCacheKey: true }, gemini: {} },
    });
  });

  it('names every mistake by its field', () => {
    const { problems } = parseCache({
      breakpoints: 'yes', ttl: '2h', bogus: 1,
      providers: { mistral: { breakpoints: true }, openai: { breakpoints: true, ttl: 5 }, gemini: { promptCacheKey: true, speed: 'fast' }, anthropic: 'on' },
    });
    expect(problems).toEqual([
      'cache.bogus is not a setting (known: breakpoints, ttl, promptCacheKey, providers)',
      'cache.breakpoints must be true or false, not "yes"',
      'cache.ttl must be "5m" or "1h" (Anthropic\'s two cache lifetimes), not "2h"',
      'cache.providers.mistral: unknown provider "mistral" (known: anthropic, openai, gemini, google)',
      'cache.providers.openai.ttl must be "5m" or "1h" (Anthropic\'s two cache lifetimes), not 5',
      'cache.providers.openai.breakpoints: "openai" speaks openai-chat; cache breakpoints are for Anthropic-protocol providers',
      'cache.providers.gemini.speed is not a setting (known: breakpoints, ttl, promptCacheKey)',
      'cache.providers.gemini.promptCacheKey: "gemini" speaks gemini; prompt_cache_key is for OpenAI-protocol providers',
      'cache.providers.anthropic must be an object',
    ]);
    expect(parseCache([]).problems).toEqual(['cache must be an object']);
  });

  it('knows the providers config.json adds, and their protocols', () => {
    handEdit({
      providers: { proxy: { protocol: 'anthropic', baseUrl: 'https://claude.example.com' }, local: { protocol: 'openai-chat', baseUrl: 'http://localhost:8000/v1', noKey: true } },
      cache: { providers: { proxy: { breakpoints: true, ttl: '1h' }, local: { breakpoints: true } } },
    });
    const { cache } = readConfig(home.dir);
    expect(cache.problems).toEqual(['cache.providers.local.breakpoints: "local" speaks openai-chat; cache breakpoints are for Anthropic-protocol providers']);
    expect(cache.settings.providers.proxy).toEqual({ breakpoints: true, ttl: '1h' });
  });
});

describe('gateway doctor', () => {
  // No daemon runs: GATEWAY_PORT=0 keeps doctor from looking at the default port.
  const doctorCache = async () => {
    const r = await runCli(['doctor', '--json'], { home: home.dir, env: { GATEWAY_PORT: '0' } });
    return (JSON.parse(r.stdout) as Array<{ id: string; ok: boolean; warning?: boolean; detail: string }>).find((c) => c.id === 'cache')!;
  };

  it('shows the cache settings, and warns about a mistake without failing', async () => {
    handEdit({ cache: { ttl: '1h', providers: { anthropic: { breakpoints: false } } } });
    expect(await doctorCache()).toEqual({ id: 'cache', ok: true, title: 'prompt caching', detail: 'cache breakpoints on (TTL 1h), session prompt_cache_key on; own settings for anthropic' });
    handEdit({ cache: { ttl: '10m' } });
    const warned = await doctorCache();
    expect(warned).toMatchObject({ ok: true, warning: true });
    expect(warned.detail).toBe('config.json: cache.ttl must be "5m" or "1h" (Anthropic\'s two cache lifetimes), not "10m"; the daemon keeps its last good cache settings');
  });
});
