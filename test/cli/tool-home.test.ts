// The per-run home `gateway run -- gemini` gives gemini-cli: the user's ~/.gemini seen through
// links, settings.json a merged copy with the gateway's settings on top; the user's own files are
// never written, and removing the overlay leaves them all in place. Real files in temp dirs.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { overlayToolHome } from '../../src/cli/tool-home.js';
import { findTool } from '../../src/cli/tools.js';
import { parseJsonWithComments, settingsObject } from '../../src/cli/tool-settings.js';

const gemini = findTool('gemini')!;
const spec = gemini.settingsHome!;
const ours = settingsObject(gemini.settings!('http://127.0.0.1:8080', undefined));
const dirs: string[] = [];
const temp = (p: string) => { const d = mkdtempSync(join(tmpdir(), p)); dirs.push(d); return d; };
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

function userHome(settings?: string): string {
  const home = temp('gateway-user-home-');
  mkdirSync(join(home, '.gemini', 'tmp', 'proj'), { recursive: true });
  writeFileSync(join(home, '.gemini', 'tmp', 'proj', 'chat.jsonl'), 'history\n');
  writeFileSync(join(home, '.gemini', 'GEMINI.md'), 'my notes\n');
  if (settings !== undefined) writeFileSync(join(home, '.gemini', 'settings.json'), settings);
  return home;
}

describe('gemini\'s settings overlay', () => {
  it('links every entry of ~/.gemini back, merges the user\'s settings under ours, and removes only itself', () => {
    const user = `{
  // mine
  "security": { "auth": { "selectedType": "oauth-personal" } },
  "mcpServers": { "docs": { "url": "http://localhost:9/mcp" } }, /* keep */
  "model": { "name": "anthropic/claude-sonnet-4-5" }
}
`;
    const home = userHome(user);
    const o = overlayToolHome(spec, ours, { HOME: home }, temp('gateway-cwd-'));
    const [[name, overlay]] = o.vars as [[string, string]];
    expect(name).toBe('GEMINI_CLI_HOME');
    expect(o.problem).toBeUndefined();
    const dir = join(overlay, '.gemini');
    expect(readdirSync(dir).sort()).toEqual(['GEMINI.md', 'settings.json', 'tmp']);
    expect(lstatSync(join(dir, 'tmp')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'tmp', 'proj', 'chat.jsonl'), 'utf8')).toBe('history\n');
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8'))).toEqual({
      security: { auth: { selectedType: 'gemini-api-key' } },
      mcpServers: { docs: { url: 'http://localhost:9/mcp' } },
      model: { name: 'anthropic/claude-sonnet-4-5' },
      privacy: { usageStatisticsEnabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    });
    o.remove();
    expect(existsSync(overlay)).toBe(false);
    expect(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8')).toBe(user);
    expect(readFileSync(join(home, '.gemini', 'tmp', 'proj', 'chat.jsonl'), 'utf8')).toBe('history\n');
    expect(readFileSync(join(home, '.gemini', 'GEMINI.md'), 'utf8')).toBe('my notes\n');
  });

  it('starts from GEMINI_CLI_HOME when the user has set it', () => {
    const home = userHome('{}');
    const o = overlayToolHome(spec, ours, { HOME: temp('gateway-other-'), GEMINI_CLI_HOME: home }, temp('gateway-cwd-'));
    try {
      expect(readFileSync(join(o.vars[0]![1], '.gemini', 'GEMINI.md'), 'utf8')).toBe('my notes\n');
    } finally { o.remove(); }
  });

  it('with no ~/.gemini: our settings alone', () => {
    const o = overlayToolHome(spec, ours, { HOME: temp('gateway-empty-home-') }, temp('gateway-cwd-'));
    try {
      expect(readdirSync(join(o.vars[0]![1], '.gemini'))).toEqual(['settings.json']);
      expect(JSON.parse(readFileSync(join(o.vars[0]![1], '.gemini', 'settings.json'), 'utf8'))).toEqual(ours);
    } finally { o.remove(); }
  });

  it('says so when the user\'s settings cannot be read, and runs on ours', () => {
    const o = overlayToolHome(spec, ours, { HOME: userHome('{ "security": ') }, temp('gateway-cwd-'));
    try {
      expect(o.problem).toMatch(/^cannot read .*settings\.json: .*; it runs with the gateway's settings only$/);
      expect(JSON.parse(readFileSync(join(o.vars[0]![1], '.gemini', 'settings.json'), 'utf8'))).toEqual(ours);
    } finally { o.remove(); }
  });

  it('warns when run from the home directory itself, where the user\'s file also counts as the folder\'s and wins', () => {
    const home = userHome('{ "security": { "auth": { "selectedType": "oauth-personal" } }, "privacy": { "usageStatisticsEnabled": false } }');
    const o = overlayToolHome(spec, ours, { HOME: home }, home);
    try {
      expect(o.problem).toMatch(/run from your home directory, .* its security\.auth\.selectedType win over the gateway's: run it from another directory$/);
    } finally { o.remove(); }
    const agreeing = userHome('{ "security": { "auth": { "selectedType": "gemini-api-key" } } }');
    const ok = overlayToolHome(spec, ours, { HOME: agreeing }, agreeing);
    try { expect(ok.problem).toBeUndefined(); } finally { ok.remove(); }
  });
});

describe('settings files with comments', () => {
  it('drops // and /* */ comments, never inside strings', () => {
    expect(parseJsonWithComments('{"url": "http://x//y", /* a */ "s": "/* no */", // z\n "q": "a\\"//b"}')).toEqual({ url: 'http://x//y', s: '/* no */', q: 'a"//b' });
  });
});
