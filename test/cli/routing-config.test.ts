// `gateway models alias|fallback|fallbacks|aliases` as a user runs them: what they write to
// config.json, and the bad routes they refuse (with one clear line, before writing anything).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';

let home: { dir: string; cleanup(): void };
beforeEach(() => { home = makeTempHome('gateway-routing-cli-'); });
afterEach(() => home.cleanup());
// No daemon runs: GATEWAY_PORT=0 keeps doctor from looking at the default port.
const cli = (...args: string[]) => runCli(args, { home: home.dir, env: { GATEWAY_PORT: '0' } });
const config = () => JSON.parse(readFileSync(join(home.dir, 'config.json'), 'utf8')) as { aliases?: unknown; routing?: { fallbacks?: unknown; retries?: unknown } };
const handEdit = (c: unknown) => writeFileSync(join(home.dir, 'config.json'), JSON.stringify(c, null, 2), { mode: 0o600 });

function expectRefused(r: CliResult, message: RegExp): void {
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(message);
}

describe('models alias with several targets', () => {
  it('writes a list for several targets and a string for one; aliases shows a list joined by →', async () => {
    const multi = await cli('models', 'alias', 'coding', 'anthropic/claude-sonnet-4-5', 'openai/gpt-5.4', 'gemini/gemini-2.5-pro');
    expect(multi.code).toBe(0);
    expect(multi.stdout).toBe('coding → anthropic/claude-sonnet-4-5 → openai/gpt-5.4 → gemini/gemini-2.5-pro\n');
    expect((await cli('models', 'alias', 'fast', 'anthropic/claude-haiku-4-5')).code).toBe(0);
    expect(config().aliases).toEqual({ coding: ['anthropic/claude-sonnet-4-5', 'openai/gpt-5.4', 'gemini/gemini-2.5-pro'], fast: 'anthropic/claude-haiku-4-5' });
    expect(JSON.parse((await cli('models', 'aliases', '--json')).stdout)).toEqual(config().aliases);
    const listed = (await cli('models', 'aliases')).stdout;
    expect(listed).toMatch(/^coding\s+anthropic\/claude-sonnet-4-5 → openai\/gpt-5\.4 → gemini\/gemini-2\.5-pro$/m);
    expect(listed).toMatch(/^fast\s+anthropic\/claude-haiku-4-5$/m);
    // Replacing a list alias with one target makes it a string again.
    expect((await cli('models', 'alias', 'coding', 'openai/gpt-5.4')).code).toBe(0);
    expect(config().aliases).toEqual({ coding: 'openai/gpt-5.4', fast: 'anthropic/claude-haiku-4-5' });
  });

  it('refuses an unknown provider in any target, and writes nothing', async () => {
    expect((await cli('models', 'alias', 'fast', 'anthropic/claude-haiku-4-5')).code).toBe(0);
    const before = readFileSync(join(home.dir, 'config.json'), 'utf8');
    expectRefused(await cli('models', 'alias', 'coding', 'anthropic/claude-sonnet-4-5', 'mistral/large'), /alias target "mistral\/large" names an unknown provider "mistral" \(known: anthropic, openai, gemini, google\)/);
    expectRefused(await cli('models', 'alias', 'coding', 'openai/gpt-5.4', 'openai/gpt-5.4'), /aliases\.coding lists "openai\/gpt-5\.4" twice/);
    expect(readFileSync(join(home.dir, 'config.json'), 'utf8')).toBe(before);
  });
});

describe('models fallback', () => {
  it('sets, lists and removes the fallbacks of a model', async () => {
    const set = await cli('models', 'fallback', 'claude-sonnet-4-5', 'openai/gpt-5.4', 'gemini/gemini-2.5-pro');
    expect(set.code).toBe(0);
    expect(set.stdout).toBe('claude-sonnet-4-5 → openai/gpt-5.4 → gemini/gemini-2.5-pro\n');
    expect((await cli('models', 'fallback', 'openai/gpt-5.4', 'anthropic/claude-sonnet-4-5')).code).toBe(0);
    expect(config().routing).toEqual({ fallbacks: { 'claude-sonnet-4-5': ['openai/gpt-5.4', 'gemini/gemini-2.5-pro'], 'openai/gpt-5.4': ['anthropic/claude-sonnet-4-5'] } });
    expect(JSON.parse((await cli('models', 'fallbacks', '--json')).stdout)).toEqual(config().routing!.fallbacks);
    expect((await cli('models', 'fallbacks')).stdout).toMatch(/^claude-sonnet-4-5\s+openai\/gpt-5\.4 → gemini\/gemini-2\.5-pro$/m);
    // Setting again replaces the list.
    expect((await cli('models', 'fallback', 'claude-sonnet-4-5', 'openai/gpt-5.4-mini')).code).toBe(0);
    expect(config().routing!.fallbacks).toEqual({ 'claude-sonnet-4-5': ['openai/gpt-5.4-mini'], 'openai/gpt-5.4': ['anthropic/claude-sonnet-4-5'] });

    const removed = await cli('models', 'fallback', 'claude-sonnet-4-5', '--remove');
    expect(removed.code).toBe(0);
    expect(config().routing!.fallbacks).toEqual({ 'openai/gpt-5.4': ['anthropic/claude-sonnet-4-5'] });
    expectRefused(await cli('models', 'fallback', 'claude-sonnet-4-5', '--remove'), /claude-sonnet-4-5 has no fallbacks/);
    expect((await cli('models', 'fallback', 'openai/gpt-5.4', '--remove')).code).toBe(0);
    expect((await cli('models', 'fallbacks')).stdout).toMatch(/^No fallbacks\./);
  });

  it('an alias may have fallbacks too', async () => {
    expect((await cli('models', 'alias', 'fast', 'anthropic/claude-haiku-4-5')).code).toBe(0);
    expect((await cli('models', 'fallback', 'fast', 'openai/gpt-5.4-mini')).code).toBe(0);
    expect(config().routing).toEqual({ fallbacks: { fast: ['openai/gpt-5.4-mini'] } });
  });

  it('refuses an unknown provider, a fallback to the model itself, a missing target, and writes nothing', async () => {
    expect((await cli('models', 'fallback', 'gpt-5.4', 'anthropic/claude-sonnet-4-5')).code).toBe(0);
    const before = readFileSync(join(home.dir, 'config.json'), 'utf8');
    expectRefused(await cli('models', 'fallback', 'claude-sonnet-4-5', 'opnai/gpt-5.4'), /fallback target "opnai\/gpt-5\.4" names an unknown provider "opnai"/);
    expectRefused(await cli('models', 'fallback', 'claude-sonnet-4-5', 'gpt-5.4'), /fallback target "gpt-5\.4" must be <provider>\/<model>/);
    expectRefused(await cli('models', 'fallback', 'claude-sonnet-4-5', 'openai/gpt-5.4', 'anthropic/claude-sonnet-4-5'),
      /routing\.fallbacks\.claude-sonnet-4-5 falls back to "anthropic\/claude-sonnet-4-5", which is claude-sonnet-4-5 itself/);
    expectRefused(await cli('models', 'fallback', 'claude-sonnet-4-5'), /give claude-sonnet-4-5 at least one target \(provider\/model\), or --remove/);
    expectRefused(await cli('models', 'fallback', 'claude-sonnet-4-5', 'openai/gpt-5.4', '--remove'), /--remove takes no targets/);
    expect(readFileSync(join(home.dir, 'config.json'), 'utf8')).toBe(before);
  });

  it('refuses a fallback that makes an alias loop back to itself', async () => {
    // A hand-written alias whose name is a provider/model (it stands in for that model): a fallback
    // from its target back to it would go round for ever.
    handEdit({ aliases: { 'openai/gpt-5.4': 'anthropic/claude-sonnet-4-5' } });
    const before = readFileSync(join(home.dir, 'config.json'), 'utf8');
    expectRefused(await cli('models', 'fallback', 'anthropic/claude-sonnet-4-5', 'openai/gpt-5.4'),
      /aliases\.openai\/gpt-5\.4 loops back to itself: openai\/gpt-5\.4 → anthropic\/claude-sonnet-4-5 → openai\/gpt-5\.4/);
    expect(readFileSync(join(home.dir, 'config.json'), 'utf8')).toBe(before);
  });

  it('a hand-made mistake elsewhere in routing does not block a good edit', async () => {
    handEdit({ routing: { retries: -1 } });
    expect((await cli('models', 'fallback', 'claude-sonnet-4-5', 'openai/gpt-5.4')).code).toBe(0);
    expect(config().routing).toEqual({ retries: -1, fallbacks: { 'claude-sonnet-4-5': ['openai/gpt-5.4'] } });
  });
});

describe('doctor', () => {
  it('warns about each problem of a hand-edited routing section, and is quiet about a good one', async () => {
    handEdit({ aliases: { coding: ['anthropic/claude-sonnet-4-5', 'mistral/large'] }, routing: { retries: -1, fallbacks: { 'claude-sonnet-4-5': ['openai/gpt-5.4'] } } });
    const checks = JSON.parse((await cli('doctor', '--json')).stdout) as { id: string; ok: boolean; warning?: boolean; detail: string }[];
    const routing = checks.find((c) => c.id === 'routing')!;
    expect(routing).toMatchObject({ ok: true, warning: true });
    expect(routing.detail).toContain('aliases.coding[1] "mistral/large" names an unknown provider "mistral"');
    expect(routing.detail).toContain('routing.retries must be a whole number ≥ 0, not -1');
    expect(routing.detail).toContain('the daemon keeps its last good routing');
    expect((await cli('doctor')).stdout).toMatch(/^! routing: config\.json: .*routing\.retries must be/m);

    handEdit({ routing: { retries: 1, fallbacks: { 'claude-sonnet-4-5': ['openai/gpt-5.4'] } } });
    const fixed = (JSON.parse((await cli('doctor', '--json')).stdout) as { id: string; ok: boolean; warning?: boolean; detail: string }[]).find((c) => c.id === 'routing')!;
    expect(fixed.ok).toBe(true);
    expect(fixed.warning).toBeUndefined();
    expect(fixed.detail).toMatch(/^1 route with fallbacks/);
  });
});
