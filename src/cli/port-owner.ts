// Who holds a TCP port: /proc/net/tcp{,6} + /proc/*/fd on Linux (no tools needed), `lsof`
// elsewhere when it is installed. 8080 is a common default of other tools, so say who it is.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';

export interface PortOwner { pid?: number; command?: string; uid?: number }

/** True when nothing listens on host:port (tries to bind it for a moment). */
export function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

function listeningInodes(port: number): { inode: string; uid: number }[] {
  const found: { inode: string; uid: number }[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try { text = readFileSync(file, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue; // 0A = LISTEN
      const localPort = parseInt(f[1]!.split(':')[1] ?? '', 16);
      if (localPort === port) found.push({ inode: f[9]!, uid: Number(f[7]) });
    }
  }
  return found;
}

function commandOf(pid: number): string | undefined {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return cmd.length > 80 ? cmd.slice(0, 77) + '...' : cmd || undefined;
  } catch {
    return undefined;
  }
}

function linuxOwner(port: number): PortOwner | undefined {
  const sockets = listeningInodes(port);
  if (sockets.length === 0) return undefined;
  const wanted = new Set(sockets.map((s) => `socket:[${s.inode}]`));
  let pids: string[] = [];
  try { pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d)); } catch { /* no /proc */ }
  for (const pid of pids) {
    let fds: string[];
    try { fds = readdirSync(`/proc/${pid}/fd`); } catch { continue; } // another user's process
    for (const fd of fds) {
      let target: string;
      try { target = readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { continue; }
      if (wanted.has(target)) return { pid: Number(pid), command: commandOf(Number(pid)), uid: sockets[0]!.uid };
    }
  }
  return { uid: sockets[0]!.uid };
}

function lsofOwner(port: number): Promise<PortOwner | undefined> {
  return new Promise((resolve) => {
    execFile('lsof', ['-nP', `-iTCP:${port}`, '-sTCP:LISTEN', '-Fpc'], { timeout: 2_000 }, (err, stdout) => {
      if (err && !stdout) return resolve(undefined);
      const pid = /^p(\d+)$/m.exec(stdout)?.[1];
      const command = /^c(.+)$/m.exec(stdout)?.[1];
      resolve(pid ? { pid: Number(pid), command } : undefined);
    });
  });
}

export async function findPortOwner(port: number): Promise<PortOwner | undefined> {
  if (process.platform === 'linux') return linuxOwner(port);
  return lsofOwner(port);
}

export function describeOwner(o: PortOwner | undefined): string {
  if (!o) return 'another program';
  if (o.pid) return `pid ${o.pid}${o.command ? ` (${o.command})` : ''}`;
  return o.uid !== undefined && o.uid !== process.getuid?.() ? `a process of user id ${o.uid}` : 'another program';
}
