// Installs Portkey's gateway from npm into a temp folder (never into the project), with
// @hono/node-server pinned to 1.13.5 through npm `overrides` (Portkey issue #1389: streams fail with
// "TypeError: immutable" otherwise), and starts it on 127.0.0.1 pinned to the given core.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BENCH_DIR, log, sleep, startServer, stopChild, type Started } from './lib.ts';

export const PORTKEY_VERSION = '1.15.2';
const HONO_NODE_SERVER = '1.13.5';

function installed(dir: string): boolean {
  try {
    const pk = JSON.parse(readFileSync(join(dir, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8')) as { version: string };
    const hono = JSON.parse(readFileSync(join(dir, 'node_modules/@hono/node-server/package.json'), 'utf8')) as { version: string };
    return pk.version === PORTKEY_VERSION && hono.version === HONO_NODE_SERVER;
  } catch { return false; }
}

function install(): string {
  // A fixed temp folder, so a second --peers run does not download it again.
  const dir = join(tmpdir(), `model-gateway-bench-portkey-${PORTKEY_VERSION}`);
  if (installed(dir)) return dir;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({
    name: 'model-gateway-bench-portkey', private: true, type: 'module',
    dependencies: { '@portkey-ai/gateway': PORTKEY_VERSION },
    overrides: { '@hono/node-server': HONO_NODE_SERVER },
  }, null, 2));
  log(`installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${dir}…`);
  // npm sits beside the node binary that runs the bench.
  const npmCli = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
  const [cmd, args] = existsSync(npmCli) ? [process.execPath, [npmCli]] : ['npm', []];
  const r = spawnSync(cmd, [...args, 'install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, encoding: 'utf8', timeout: 180_000 });
  if (r.status !== 0 || !installed(dir)) throw new Error(`npm install of Portkey failed: ${(r.stderr || r.stdout || String(r.error)).trim().slice(0, 400)}`);
  return dir;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address() as { port: number }; s.close(() => resolve(port)); });
  });
}

export async function startPortkey(core: number): Promise<Started<{ port: number; pid: number }> & { version: string }> {
  const dir = install();
  const port = await freePort();
  const entry = join(dir, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  const started = await startServer<{ pid: number }>('Portkey', core, [process.execPath, join(BENCH_DIR, 'portkey-launch.ts'), entry, `--port=${port}`, '--headless'], { timeoutMs: 60_000 });
  // Ready when it answers on loopback.
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
      if (r.ok) { await r.text(); return { ...started, info: { port, pid: started.info.pid }, version: PORTKEY_VERSION }; }
    } catch { /* not yet */ }
    await sleep(100);
  }
  await stopChild(started.child);
  throw new Error(`Portkey did not answer on 127.0.0.1:${port}: ${started.stderr().slice(-400)}`);
}
