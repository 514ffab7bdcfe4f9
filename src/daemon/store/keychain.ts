// The OS keychain, through @napi-rs/keyring, with a timeout (3 s) on every call so a locked or
// absent keychain never hangs the CLI or the daemon, and with the backend in use detected and
// named, because on Linux the fallback (the kernel keyring) loses everything at reboot.
//
// The calls run in a child process (keychain-helper.ts) that is killed on timeout: creating an
// entry connects to D-Bus synchronously, which would block our event loop, timers included.
// Calls made in the same tick share one child (the daemon asks for three providers at once).
//
// Knobs (tests and advanced use): GATEWAY_KEYCHAIN_SERVICE replaces the service name
// `model-gateway` (tests use a unique one so a user's real entries are never touched);
// GATEWAY_KEYCHAIN_STORE=secret-service|keyutils pins the Linux store instead of auto-detecting.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULT_KEYCHAIN_SERVICE = 'model-gateway';
export const KEYCHAIN_TIMEOUT_MS = 3_000;

export type KeychainBackendId = 'macos-keychain' | 'windows-credential-manager' | 'secret-service' | 'linux-keyutils';

export interface KeychainBackend {
  id: KeychainBackendId;
  name: string;
  survivesReboot: boolean;
}

export const KEYCHAIN_BACKENDS: Record<KeychainBackendId, KeychainBackend> = {
  'macos-keychain': { id: 'macos-keychain', name: 'macOS Keychain', survivesReboot: true },
  'windows-credential-manager': { id: 'windows-credential-manager', name: 'Windows Credential Manager', survivesReboot: true },
  'secret-service': { id: 'secret-service', name: 'Secret Service (Linux, D-Bus)', survivesReboot: true },
  'linux-keyutils': { id: 'linux-keyutils', name: 'Linux kernel keyring', survivesReboot: false },
};

export type KeychainErrorCode = 'unavailable' | 'timeout' | 'failed';

/** A keychain that cannot be used; `message` names the backend and the problem, never a secret. */
export class KeychainError extends Error {
  readonly code: KeychainErrorCode;
  constructor(code: KeychainErrorCode, message: string) {
    super(message);
    this.name = 'KeychainError';
    this.code = code;
  }
}

export interface Keychain {
  readonly service: string;
  /** The backend that answers here; throws KeychainError when none does. */
  backend(): Promise<KeychainBackend>;
  get(account: string): Promise<string | undefined>;
  set(account: string, secret: string): Promise<void>;
  /** True when an entry was deleted, false when there was none. */
  delete(account: string): Promise<boolean>;
}

export function keychainService(env: NodeJS.ProcessEnv = process.env): string {
  return env.GATEWAY_KEYCHAIN_SERVICE || DEFAULT_KEYCHAIN_SERVICE;
}

function pinnedLinuxStores(env: NodeJS.ProcessEnv): string[] | null {
  const v = env.GATEWAY_KEYCHAIN_STORE;
  if (!v) return null;
  if (v === 'secret-service' || v === 'keyutils') return [v];
  throw new KeychainError('unavailable', `GATEWAY_KEYCHAIN_STORE must be "secret-service" or "keyutils", got "${v}"`);
}

// ---- the helper process ----------------------------------------------------------------------

type Op = { op: 'get' | 'set' | 'delete'; account: string; secret?: string };
type OpResult = { ok: true; value?: string | boolean | null } | { ok: false; error: string };
interface HelperDone { backend: KeychainBackendId | null; problems: { id: string; message: string }[]; results: OpResult[] }

function helperPath(): string {
  const here = fileURLToPath(import.meta.url);
  const ts = join(dirname(here), 'keychain-helper.ts');
  // From dist/ the compiled .js runs; from src/ (vitest) Node runs the .ts itself.
  return here.endsWith('.ts') && existsSync(ts) ? ts : join(dirname(here), 'keychain-helper.js');
}

function backendName(id: string | undefined): string {
  return (id && KEYCHAIN_BACKENDS[id as KeychainBackendId]?.name) || 'the keychain';
}

function runHelper(env: NodeJS.ProcessEnv, request: { service: string; stores: string[] | null; ops: Op[] }, timeoutMs: number): Promise<HelperDone> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [helperPath()], { stdio: ['pipe', 'pipe', 'pipe'], env, windowsHide: true });
    let stdout = '';
    let stderr = '';
    let stage: string | undefined;
    let done: HelperDone | undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      let nl: number;
      while ((nl = stdout.indexOf('\n')) >= 0) {
        const line = stdout.slice(0, nl);
        stdout = stdout.slice(nl + 1);
        try {
          const msg = JSON.parse(line) as { stage?: string; done?: HelperDone };
          if (msg.stage) stage = msg.stage;
          if (msg.done) done = msg.done;
        } catch { /* not ours */ }
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr = (stderr + d).slice(-2000); });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new KeychainError('timeout', `${backendName(stage)} did not answer within ${timeoutMs / 1000} s (is it locked, or waiting for an unlock prompt?)`));
    }, timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); reject(new KeychainError('unavailable', `cannot run the keychain helper: ${e.message}`)); });
    child.on('close', () => {
      clearTimeout(timer);
      if (done) resolve(done);
      else reject(new KeychainError('unavailable', `the keychain helper failed: ${stderr.trim().split('\n').at(-1) ?? 'no output'}`));
    });
    child.stdin.on('error', () => { /* the child died; reported on close */ });
    child.stdin.end(JSON.stringify(request));
  });
}

// ---- the keychain --------------------------------------------------------------------------

export function openKeychain(opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Keychain {
  const env = opts.env ?? process.env;
  const timeoutMs = opts.timeoutMs ?? KEYCHAIN_TIMEOUT_MS;
  const service = keychainService(env);
  let known: KeychainBackend | undefined; // the backend the last helper run found
  let queue: { op: Op; resolve(r: OpResult): void; reject(e: unknown): void }[] = [];
  let detectOnly: { resolve(b: KeychainBackend): void; reject(e: unknown): void }[] = [];
  let scheduled = false;

  async function flush(): Promise<void> {
    const ops = queue;
    const waiters = detectOnly;
    queue = [];
    detectOnly = [];
    scheduled = false;
    const fail = (e: unknown) => {
      for (const o of ops) o.reject(e);
      for (const w of waiters) w.reject(e);
    };
    let done: HelperDone;
    try {
      done = await runHelper(env, { service, stores: pinnedLinuxStores(env), ops: ops.map((o) => o.op) }, timeoutMs);
    } catch (e) {
      return fail(e);
    }
    if (!done.backend) {
      known = undefined;
      const why = done.problems.map((p) => `${backendName(p.id)} is not usable: ${p.message}`).join('; ');
      return fail(new KeychainError('unavailable', `no usable keychain: ${why || 'none found'}`));
    }
    const backend = KEYCHAIN_BACKENDS[done.backend];
    known = backend;
    for (const w of waiters) w.resolve(backend);
    ops.forEach((o, i) => {
      const r = done.results[i];
      if (r) o.resolve(r);
      else o.reject(new KeychainError('failed', `${backend.name} gave no answer`));
    });
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => { void flush(); });
  }

  async function call(op: Op, what: string): Promise<string | boolean | null | undefined> {
    const r = await new Promise<OpResult>((resolve, reject) => {
      queue.push({ op, resolve, reject });
      schedule();
    });
    if (!r.ok) throw new KeychainError('failed', `${known?.name ?? 'the keychain'} could not ${what}: ${r.error}`);
    return r.value;
  }

  return {
    service,
    backend: () => known ? Promise.resolve(known) : new Promise<KeychainBackend>((resolve, reject) => {
      detectOnly.push({ resolve, reject });
      schedule();
    }),
    get: async (account) => ((await call({ op: 'get', account }, 'read an entry')) as string | null) ?? undefined,
    set: async (account, secret) => { await call({ op: 'set', account, secret }, 'store an entry'); },
    delete: async (account) => Boolean(await call({ op: 'delete', account }, 'delete an entry')),
  };
}
