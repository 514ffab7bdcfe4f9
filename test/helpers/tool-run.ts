// Runs a real coding tool's binary headless for a test: its output collected, killed after a
// deadline, and the throwaway HOME and working folder it was given removed when it exits.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';

export interface ToolRun { code: number | null; stdout: string; stderr: string }

export function runTool(bin: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number; removeAfter: string[] }): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 90_000);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code) => {
      clearTimeout(timer);
      for (const dir of opts.removeAfter) rmSync(dir, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    });
  });
}
