// parseRouting: config.json's `routing` section and list aliases → the settings the daemon routes
// by, and each problem named by its field (the daemon then keeps its last good routing, the CLI
// refuses the edit).
import { describe, expect, it } from 'vitest';
import { DEFAULT_ROUTING, parseRouting } from '../../src/daemon/routing/settings.js';

const PROVIDERS = ['anthropic', 'openai', 'gemini', 'google'];
const parse = (config: { aliases?: unknown; routing?: unknown }) => parseRouting(config, PROVIDERS);

describe('parseRouting', () => {
  it('an absent section is the defaults, with no problem', () => {
    expect(parse({})).toEqual({ settings: DEFAULT_ROUTING, problems: [], ignored: [] });
    expect(parse({ aliases: { fast: 'anthropic/claude-haiku-4-5' }, routing: {} })).toEqual({ settings: DEFAULT_ROUTING, problems: [], ignored: [] });
  });

  it('reads the documented shape: seconds become milliseconds, the provider section is keyed by provider id', () => {
    const { settings, problems } = parse({
      routing: {
        retries: 3, retryAfterCapSeconds: 12.5,
        backoff: { baseMs: 100, maxMs: 2000 },
        providers: { openai: { retries: 5, keyOrder: 'priority' }, google: { keyOrder: 'round-robin' } },
        breaker: { failures: 4, windowSeconds: 60, cooldownSeconds: 10 },
      },
    });
    expect(problems).toEqual([]);
    expect(settings).toEqual({
      retries: 3, retryAfterCapMs: 12_500,
      backoff: { baseMs: 100, maxMs: 2000 },
      providers: { openai: { retries: 5, keyOrder: 'priority' }, gemini: { keyOrder: 'round-robin' } },
      breaker: { failures: 4, windowMs: 60_000, cooldownMs: 10_000 },
      routes: {},
    });
  });

  it('a part left out takes its default', () => {
    const { settings } = parse({ routing: { backoff: { maxMs: 9000 }, breaker: { failures: 2 } } });
    expect(settings.backoff).toEqual({ baseMs: DEFAULT_ROUTING.backoff.baseMs, maxMs: 9000 });
    expect(settings.breaker).toEqual({ ...DEFAULT_ROUTING.breaker, failures: 2 });
    expect(settings.retries).toBe(DEFAULT_ROUTING.retries);
  });

  it('builds routes: a list alias is its list, a model with fallbacks comes first in its own', () => {
    const { settings, problems } = parse({
      aliases: {
        fast: 'anthropic/claude-haiku-4-5',
        coding: ['anthropic/claude-sonnet-4-5', 'openai/gpt-5.4', 'gemini/gemini-2.5-pro'],
      },
      routing: {
        fallbacks: {
          'claude-sonnet-4-5': ['openai/gpt-5.4'],
          'openai/gpt-5.4': ['anthropic/claude-sonnet-4-5', 'gemini/gemini-2.5-pro'],
          fast: ['openai/gpt-5.4-mini'],
          coding: ['openai/gpt-5.4', 'openai/o4'],
        },
      },
    });
    expect(problems).toEqual([]);
    expect(settings.routes).toEqual({
      coding: ['anthropic/claude-sonnet-4-5', 'openai/gpt-5.4', 'gemini/gemini-2.5-pro', 'openai/o4'],
      'claude-sonnet-4-5': ['claude-sonnet-4-5', 'openai/gpt-5.4'],
      'openai/gpt-5.4': ['openai/gpt-5.4', 'anthropic/claude-sonnet-4-5', 'gemini/gemini-2.5-pro'],
      fast: ['anthropic/claude-haiku-4-5', 'openai/gpt-5.4-mini'],
    });
    // A single-string alias is no route: it is resolved as before (resolveModel with its target).
    expect(parse({ aliases: { fast: 'anthropic/claude-haiku-4-5' } }).settings.routes).toEqual({});
  });

  it('a provider added by the user counts as known when its name is passed', () => {
    const r = parseRouting({ aliases: { local: ['ollama/qwen3:8b', 'openai/gpt-5.4'] } }, [...PROVIDERS, 'ollama']);
    expect(r.problems).toEqual([]);
    expect(r.settings.routes.local).toEqual(['ollama/qwen3:8b', 'openai/gpt-5.4']);
  });

  const bad: [string, { aliases?: unknown; routing?: unknown }, RegExp][] = [
    ['an unknown provider in an alias list', { aliases: { coding: ['anthropic/claude-sonnet-4-5', 'mistral/large'] } }, /^aliases\.coding\[1\] "mistral\/large" names an unknown provider "mistral"/],
    ['an unknown provider in a fallback', { routing: { fallbacks: { 'claude-sonnet-4-5': ['mistrall/large'] } } }, /^routing\.fallbacks\.claude-sonnet-4-5\[0\] "mistrall\/large" names an unknown provider/],
    ['a fallback target that is not provider/model', { routing: { fallbacks: { 'claude-sonnet-4-5': ['gpt-5.4'] } } }, /^routing\.fallbacks\.claude-sonnet-4-5\[0\] "gpt-5\.4" is not provider\/model/],
    ['an alias target that is not provider/model', { aliases: { coding: ['anthropic/claude-sonnet-4-5', 'gpt-5.4'] } }, /^aliases\.coding\[1\] "gpt-5\.4" is not provider\/model/],
    ['a fallback that is not a list', { routing: { fallbacks: { m: 'openai/gpt-5.4' } } }, /^routing\.fallbacks\.m must be a non-empty list/],
    ['an empty alias list', { aliases: { coding: [] } }, /^aliases\.coding must be "provider\/model" or a non-empty list/],
    ['a fallback to the model itself', { routing: { fallbacks: { 'claude-sonnet-4-5': ['anthropic/claude-sonnet-4-5'] } } }, /^routing\.fallbacks\.claude-sonnet-4-5 falls back to "anthropic\/claude-sonnet-4-5", which is claude-sonnet-4-5 itself/],
    ['a fallback to an alias\'s own target', { aliases: { fast: 'anthropic/claude-haiku-4-5' }, routing: { fallbacks: { fast: ['anthropic/claude-haiku-4-5'] } } }, /^routing\.fallbacks\.fast falls back to .* itself/],
    ['a target listed twice', { aliases: { coding: ['openai/gpt-5.4', 'openai/gpt-5.4'] } }, /^aliases\.coding lists "openai\/gpt-5\.4" twice/],
    ['negative retries', { routing: { retries: -1 } }, /^routing\.retries must be a whole number ≥ 0, not -1/],
    ['fractional retries', { routing: { retries: 1.5 } }, /^routing\.retries must be a whole number ≥ 0, not 1\.5/],
    ['retries as a string', { routing: { retries: '2' } }, /^routing\.retries must be a whole number ≥ 0, not "2"/],
    ['a negative provider retry count', { routing: { providers: { openai: { retries: -2 } } } }, /^routing\.providers\.openai\.retries must be a whole number ≥ 0/],
    ['a negative retry-after cap', { routing: { retryAfterCapSeconds: -5 } }, /^routing\.retryAfterCapSeconds must be a number ≥ 0, not -5/],
    ['a negative backoff', { routing: { backoff: { baseMs: -1 } } }, /^routing\.backoff\.baseMs must be a number ≥ 0/],
    ['a backoff base above its ceiling', { routing: { backoff: { baseMs: 5000, maxMs: 1000 } } }, /^routing\.backoff\.baseMs \(5000\) is above routing\.backoff\.maxMs \(1000\)/],
    ['a negative breaker window', { routing: { breaker: { windowSeconds: -30 } } }, /^routing\.breaker\.windowSeconds must be a number ≥ 0/],
    ['a negative cool-down', { routing: { breaker: { cooldownSeconds: -1 } } }, /^routing\.breaker\.cooldownSeconds must be a number ≥ 0/],
    ['breaker failures below 1', { routing: { breaker: { failures: 0 } } }, /^routing\.breaker\.failures must be a whole number ≥ 1, not 0/],
    ['an unknown keyOrder', { routing: { providers: { openai: { keyOrder: 'random' } } } }, /^routing\.providers\.openai\.keyOrder must be "round-robin" or "priority", not "random"/],
    ['an unknown provider section', { routing: { providers: { mistral: { retries: 1 } } } }, /^routing\.providers\.mistral: unknown provider "mistral"/],
    ['routing that is not an object', { routing: [] }, /^routing must be an object/],
    ['a fallback keyed by an unknown provider', { routing: { fallbacks: { 'mistral/large': ['openai/gpt-5.4'] } } }, /^routing\.fallbacks\.mistral\/large: "mistral\/large" names an unknown provider "mistral"/],
  ];
  for (const [what, config, message] of bad) {
    it(`names the problem: ${what}`, () => {
      const { problems } = parse(config);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(message);
    });
  }

  it('an alias that comes back to itself through a fallback is a loop, named with its path', () => {
    // Aliases are `name → provider/model`, so only an alias whose name is itself a provider/model
    // (hand-written; the CLI refuses such names) can be reached again.
    const { problems } = parse({
      aliases: { 'openai/gpt-5.4': 'anthropic/claude-sonnet-4-5' },
      routing: { fallbacks: { 'anthropic/claude-sonnet-4-5': ['openai/gpt-5.4'] } },
    });
    expect(problems).toEqual(['aliases.openai/gpt-5.4 loops back to itself: openai/gpt-5.4 → anthropic/claude-sonnet-4-5 → openai/gpt-5.4']);
  });

  it('an alias naming an alias that names it back is one loop, reported once', () => {
    const { problems } = parse({ aliases: { 'openai/a': 'anthropic/b', 'anthropic/b': ['openai/a'] } });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^aliases\.openai\/a loops back to itself: openai\/a → anthropic\/b → openai\/a$/);
  });

  it('two models falling back to each other is no loop: a route is one flat list', () => {
    const { problems, settings } = parse({ routing: { fallbacks: { 'openai/gpt-5.4': ['anthropic/claude-sonnet-4-5'], 'anthropic/claude-sonnet-4-5': ['openai/gpt-5.4'] } } });
    expect(problems).toEqual([]);
    expect(settings.routes['openai/gpt-5.4']).toEqual(['openai/gpt-5.4', 'anthropic/claude-sonnet-4-5']);
  });

  it('a field that is no setting is named, in each object of the section (a typo would be a setting silently not in force), and the rest is used', () => {
    const { problems, ignored, settings } = parse({ routing: { retry: 3, backoff: { baseMs: 100, max: 1 }, breaker: { failures: 2, cooldown: 5 }, providers: { openai: { retries: 1, token: 'x' } } } });
    expect(problems).toEqual([]);
    expect(settings.backoff.baseMs).toBe(100);
    expect(settings.breaker.failures).toBe(2);
    expect(settings.providers.openai).toEqual({ retries: 1 });
    expect(ignored).toEqual([
      'routing.retry is not a setting (known: retries, retryAfterCapSeconds, backoff, providers, breaker, fallbacks)',
      'routing.backoff.max is not a setting (known: baseMs, maxMs)',
      'routing.providers.openai.token is not a setting (known: retries, keyOrder)',
      'routing.breaker.cooldown is not a setting (known: failures, windowSeconds, cooldownSeconds)',
    ]);
    expect(parse({ routing: { retries: 1, retryAfterCapSeconds: 5, backoff: { baseMs: 1, maxMs: 2 }, breaker: { failures: 1, windowSeconds: 1, cooldownSeconds: 1 }, providers: { openai: { retries: 0, keyOrder: 'priority' } }, fallbacks: {} } }).ignored).toEqual([]);
  });

  it('every problem is listed, not only the first', () => {
    const { problems } = parse({ routing: { retries: -1, breaker: { failures: 0 }, providers: { openai: { keyOrder: 'x' } } } });
    expect(problems).toHaveLength(3);
  });
});
