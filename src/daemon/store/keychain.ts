// The OS keychain, through @napi-rs/keyring (imported lazily: `gateway --help` must not load a
// native module). Every call is raced against a timeout so a locked or absent keychain never
// hangs the CLI or the daemon, and the backend in use is detected and named, because on Linux the
// fallback (the kernel keyring) silently loses everything at reboot.
//
// Knobs (tests and advanced use): GATEWAY_KEYCHAIN_SERVICE replaces the service name
// `model-gateway` (tests use a unique one so a user's real entries are never touched);
// GATEWAY_KEYCHAIN_STORE=secret-service|keyutils pins the Linux store instead of auto-detecting.
import type { AsyncEntry as AsyncEntryType, LinuxStore } from '@napi-rs/keyring';

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

type KeyringModule = typeof import('@napi-rs/keyring');
// A kernel keyring that refused a write once is not trusted again in this process: where no
// session keyring is shared (containers), a retry "succeeds" into a keyring no other process sees.
let keyutilsRefused: string | undefined;
let keyringModule: Promise<KeyringModule> | undefined;

function loadKeyring(): Promise<KeyringModule> {
  keyringModule ??= import('@napi-rs/keyring').catch((e: unknown) => {
    keyringModule = undefined;
    throw new KeychainError('unavailable', `the keychain module @napi-rs/keyring could not be loaded (${oneLine(e)})`);
  });
  return keyringModule;
}

export function keychainService(env: NodeJS.ProcessEnv = process.env): string {
  return env.GATEWAY_KEYCHAIN_SERVICE || DEFAULT_KEYCHAIN_SERVICE;
}

function pinnedLinuxStore(env: NodeJS.ProcessEnv): LinuxStore | undefined {
  const v = env.GATEWAY_KEYCHAIN_STORE;
  if (!v) return undefined;
  if (v === 'secret-service' || v === 'keyutils') return v;
  throw new KeychainError('unavailable', `GATEWAY_KEYCHAIN_STORE must be "secret-service" or "keyutils", got "${v}"`);
}

function oneLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** Runs one keychain call, aborting it and rejecting with a timeout error after `ms`. */
async function withTimeout<T>(what: string, ms: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ac.abort();
      reject(new KeychainError('timeout', `${what} did not answer within ${ms / 1000} s (is it locked, or waiting for an unlock prompt?)`));
    }, ms);
    timer.unref();
  });
  try {
    return await Promise.race([fn(ac.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const PROBE_ACCOUNT = '__probe__';

export function openKeychain(opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Keychain {
  const env = opts.env ?? process.env;
  const timeoutMs = opts.timeoutMs ?? KEYCHAIN_TIMEOUT_MS;
  const service = keychainService(env);
  // Only a successful detection is remembered: a keychain unlocked later is found on the next call.
  let detected: Promise<{ backend: KeychainBackend; store?: LinuxStore }> | undefined;

  async function entry(account: string, store?: LinuxStore): Promise<AsyncEntryType> {
    const { AsyncEntry } = await loadKeyring();
    return new AsyncEntry(service, account, store ? { linux: { store } } : undefined);
  }

  // The kernel keyring can answer reads while refusing writes, so it is probed with a write.
  async function probe(backend: KeychainBackend, store?: LinuxStore): Promise<void> {
    try {
      const e = await entry(PROBE_ACCOUNT, store);
      if (store === 'keyutils') {
        await withTimeout(backend.name, timeoutMs, (signal) => e.setPassword('probe', signal));
        await withTimeout(backend.name, timeoutMs, (signal) => e.deleteCredential(signal));
      } else {
        await withTimeout(backend.name, timeoutMs, (signal) => e.getPassword(signal));
      }
    } catch (err) {
      if (err instanceof KeychainError) throw err;
      throw new KeychainError('unavailable', `${backend.name} is not usable: ${oneLine(err)}`);
    }
  }

  async function detect(): Promise<{ backend: KeychainBackend; store?: LinuxStore }> {
    await loadKeyring();
    if (process.platform === 'darwin' || process.platform === 'win32') {
      const backend = KEYCHAIN_BACKENDS[process.platform === 'darwin' ? 'macos-keychain' : 'windows-credential-manager'];
      await probe(backend);
      return { backend };
    }
    const pinned = pinnedLinuxStore(env);
    const order: LinuxStore[] = pinned ? [pinned] : ['secret-service', 'keyutils'];
    const problems: string[] = [];
    for (const store of order) {
      const backend = KEYCHAIN_BACKENDS[store === 'secret-service' ? 'secret-service' : 'linux-keyutils'];
      if (store === 'keyutils' && keyutilsRefused) {
        problems.push(keyutilsRefused);
        continue;
      }
      try {
        await probe(backend, store);
        return { backend, store };
      } catch (err) {
        if (store === 'keyutils') keyutilsRefused = oneLine(err);
        problems.push(oneLine(err));
        if (err instanceof KeychainError && err.code === 'timeout') throw err;
      }
    }
    throw new KeychainError('unavailable', `no usable keychain: ${problems.join('; ')}`);
  }

  function resolved(): Promise<{ backend: KeychainBackend; store?: LinuxStore }> {
    detected ??= detect().catch((e: unknown) => {
      detected = undefined;
      throw e;
    });
    return detected;
  }

  async function call<T>(what: string, account: string, fn: (e: AsyncEntryType, signal: AbortSignal) => Promise<T>): Promise<T> {
    const { backend, store } = await resolved();
    try {
      const e = await entry(account, store);
      return await withTimeout(backend.name, timeoutMs, (signal) => fn(e, signal));
    } catch (err) {
      if (err instanceof KeychainError) throw err;
      throw new KeychainError('failed', `${backend.name} could not ${what}: ${oneLine(err)}`);
    }
  }

  return {
    service,
    backend: async () => (await resolved()).backend,
    get: async (account) => (await call('read an entry', account, (e, s) => e.getPassword(s))) ?? undefined,
    set: (account, secret) => call('store an entry', account, (e, s) => e.setPassword(secret, s)),
    delete: (account) => call('delete an entry', account, (e, s) => e.deleteCredential(s)),
  };
}

/** How to describe a backend to a user, including the reboot caveat of the kernel keyring. */
export function describeBackend(b: KeychainBackend): string {
  return b.survivesReboot ? b.name : `${b.name} (does not survive a reboot)`;
}
