// Runs the real daemon (`startDaemon`) in its own process so the bench can pin it to a core:
// a temp state dir, one proxy key made with KeyStore, static provider keys, every provider origin
// pointed at the bench mock. Prints {"url","port","pid","adminToken","proxyKey"} as one JSON line.
// Usage: node bench/daemon-process.ts <build dir> <mock origin>
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const buildDir = resolve(process.argv[2]!);
const origin = process.argv[3]!;
const mod = (p: string) => import(pathToFileURL(join(buildDir, p)).href);

const { startDaemon } = await mod('daemon/server.js');
const { KeyStore } = await mod('daemon/store/keys.js');
const { staticSecrets } = await mod('daemon/store/secrets.js');

const stateDir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
const { key } = new KeyStore(stateDir).create({ name: 'bench' });
const daemon = await startDaemon({
  port: 0,
  stateDir,
  secrets: staticSecrets({ openai: 'sk-bench-openai', anthropic: 'sk-ant-bench', gemini: 'bench-gemini-key' }),
  origins: { openai: origin, anthropic: origin, gemini: origin },
  log: (line: string) => process.stderr.write(`[daemon] ${line}\n`),
});
process.stdout.write(JSON.stringify({ url: daemon.url, port: daemon.port, pid: process.pid, adminToken: daemon.adminToken, proxyKey: key }) + '\n');

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await daemon.close(500).catch(() => {});
  rmSync(stateDir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
