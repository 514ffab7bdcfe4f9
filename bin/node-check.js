// The Node.js version this package needs. package.json `engines.node` is the one place that says
// it; bin/gateway.js, `gateway doctor`, scripts/test.sh and scripts/ensure-node.sh all ask here.
// Plain JavaScript with no newer syntax, so that an old Node can run it and say what is wrong.
//
// As a command: `node bin/node-check.js [what]` exits 0 when this Node is new enough, else prints
// one line ("error: <what> needs Node.js …; this is v…. Get one: …") on stderr and exits 1.
import { existsSync, readFileSync } from 'fs';
import { resolve } from 'path';
import { fileURLToPath, pathToFileURL } from 'url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** `>=22.19.0` (optionally with a `v` or fewer parts) → [22, 19, 0]; any other range is refused. */
export function parseMinimum(range) {
  const m = /^\s*>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(String(range));
  if (!m) throw new Error('package.json engines.node must be ">=X.Y.Z", got "' + range + '"');
  return [Number(m[1]), Number(m[2] || 0), Number(m[3] || 0)];
}

/** The `engines.node` range of this package, e.g. ">=22.19.0". */
export function requiredRange() {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const range = pkg.engines && pkg.engines.node;
  if (!range) throw new Error('package.json has no engines.node');
  return range;
}

/** True when `version` ("22.12.0" or "v22.12.0") is at least the minimum of `range`. */
export function satisfies(version, range) {
  const want = parseMinimum(range);
  const have = String(version).replace(/^v/, '').split('.').map(function (p) { return parseInt(p, 10) || 0; });
  for (let i = 0; i < 3; i++) {
    const h = have[i] || 0;
    if (h !== want[i]) return h > want[i];
  }
  return true;
}

/** One line saying how to get a supported Node: in a clone, the repo's own script; else nvm or nodejs.org. */
export function howToGetNode(cwd) {
  const script = ROOT + '/scripts/ensure-node.sh';
  if (existsSync(script)) {
    const path = resolve(cwd || process.cwd()) === ROOT ? 'scripts/ensure-node.sh' : script;
    const shown = /^[\w.\/-]+$/.test(path) ? path : "'" + path.replace(/'/g, "'\\''") + "'";
    return 'Get one: export PATH="$(bash ' + shown + '):$PATH"';
  }
  return 'Get one with nvm (nvm install 24) or from https://nodejs.org/en/download';
}

/**
 * Undefined when `version` is new enough for this package, else the one-line message to show
 * (without the "error: " prefix). `what` names the program that needs it.
 */
export function nodeVersionProblem(what, version, range) {
  const v = version || process.versions.node;
  const r = range || requiredRange();
  if (satisfies(v, r)) return undefined;
  return what + ' needs Node.js ' + r + ' (package.json engines.node); this is v' + String(v).replace(/^v/, '') + '. ' + howToGetNode();
}

const entry = process.argv[1];
if (entry && import.meta.url === pathToFileURL(entry).href) {
  let problem;
  try {
    problem = nodeVersionProblem(process.argv[2] || 'this project');
  } catch (e) {
    problem = e.message;
  }
  if (problem) {
    process.stderr.write('error: ' + problem + '\n');
    process.exit(1);
  }
}
