// Where proxy, admin and session keys live, behind one asynchronous boundary: keys.json in the
// state directory on a laptop (FileKeyRecords, the KeyStore the CLI has always used), or the team's
// PostgreSQL store (store/pg-keys.ts) that several daemons share. The daemon's key index loads from
// it and hears from it when a record changed elsewhere; the admin API, the dashboard, session keys
// and the CLI change records through it. Either way only a key's hash is ever stored.
import { readFile } from 'node:fs/promises';
import type { LimitsPatch } from '../limits/limits.js';
import { findKey, KeyStore, withValidLimits, type AdminKeyOptions, type CreatedKey, type KeyRecord, type ProxyKeyOptions } from './keys.js';
import { FILES } from './paths.js';
import { watchStateFile } from './watch-file.js';

export interface KeyRecords {
  /** Every record, revoked, expired and session keys included, oldest first. */
  list(): Promise<KeyRecord[]>;
  /** One record by id; undefined when there is none (a session key that ended). */
  get(id: string): Promise<KeyRecord | undefined>;
  /** One record by id or name (an active one wins when a name was reused). */
  find(idOrName: string): Promise<KeyRecord | undefined>;
  create(opts?: ProxyKeyOptions, now?: Date): Promise<CreatedKey>;
  createAdmin(opts?: AdminKeyOptions, now?: Date): Promise<CreatedKey>;
  /** Changes a key's limits (a value sets, null removes, absent keeps); returns the record as saved. */
  setLimits(idOrName: string, patch: LimitsPatch): Promise<KeyRecord>;
  /** Revokes a key (a revoked one stays as it was); returns its record. */
  revoke(idOrName: string, now?: Date): Promise<KeyRecord>;
  /** A session key of `chat` or `run` (session-keys.ts); stale ones are dropped meanwhile. */
  createSession(purpose: string, leaseMs: number, now?: Date): Promise<CreatedKey>;
  /** Moves a session key's expiry to `until`; undefined when it is gone or revoked. */
  renewSession(id: string, until: Date): Promise<KeyRecord | undefined>;
  /** Deletes a session key's record; true when there was one. */
  removeSession(id: string): Promise<boolean>;
  /**
   * Calls `changed(id)` when the record with that id may have changed outside this process, or
   * `changed()` when any may have (re-read them all).
   */
  watch(changed: (id?: string) => void): { close(): void };
  close(): Promise<void>;
}

/** The key store cannot be reached now (one line, never a password): a 503, not the caller's mistake. */
export class KeyStoreUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyStoreUnavailable';
  }
}

/** keys.json: reads are asynchronous (the daemon never blocks on them), writes are KeyStore's atomic ones. */
export class FileKeyRecords implements KeyRecords {
  private readonly file: KeyStore;
  constructor(readonly dir: string) { this.file = new KeyStore(dir); }

  async list(): Promise<KeyRecord[]> {
    let text: string;
    try {
      text = await readFile(this.file.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    let parsed: { keys?: unknown };
    try { parsed = JSON.parse(text) as { keys?: unknown }; } catch { throw new Error(`${this.file.path} is not valid JSON; fix or remove it`); }
    return Array.isArray(parsed?.keys) ? (parsed.keys as KeyRecord[]).filter((k) => k && typeof k.hash === 'string').map(withValidLimits) : [];
  }

  async get(id: string): Promise<KeyRecord | undefined> { return (await this.list()).find((k) => k.id === id); }
  async find(idOrName: string): Promise<KeyRecord | undefined> { return findKey(await this.list(), idOrName); }
  async create(opts?: ProxyKeyOptions, now?: Date): Promise<CreatedKey> { return this.file.create(opts, now); }
  async createAdmin(opts?: AdminKeyOptions, now?: Date): Promise<CreatedKey> { return this.file.createAdmin(opts, now); }
  async setLimits(idOrName: string, patch: LimitsPatch): Promise<KeyRecord> { return this.file.setLimits(idOrName, patch); }
  async revoke(idOrName: string, now?: Date): Promise<KeyRecord> { return this.file.revoke(idOrName, now); }
  async createSession(purpose: string, leaseMs: number, now?: Date): Promise<CreatedKey> { return this.file.createSession(purpose, leaseMs, now); }
  async renewSession(id: string, until: Date): Promise<KeyRecord | undefined> { return this.file.renewSession(id, until); }
  async removeSession(id: string): Promise<boolean> { return this.file.removeSession(id); }

  /** Another process (`gateway keys revoke`, a hand edit) wrote keys.json: re-read it all. */
  watch(changed: (id?: string) => void): { close(): void } {
    return watchStateFile(this.dir, FILES.keys, () => changed(), 10);
  }

  async close(): Promise<void> {}
}
