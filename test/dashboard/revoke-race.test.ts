// Revocation from the dashboard must apply to the very next request, even while the key index's
// file watcher is reloading the same file: an older reload must never publish after a newer one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { KeyIndex } from '../../src/daemon/access/auth.js';
import { KeyStore } from '../../src/daemon/store/keys.js';

it('once the reload after a revocation resolves, the key is refused', async () => {
  let accepted = 0;
  for (let i = 0; i < 200; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-race-'));
    const store = new KeyStore(dir);
    const { key, record } = store.create({ name: 'a' });
    const index = new KeyIndex(dir);
    await index.reload();
    const early = index.reload(); // the watcher's, reading the file as it was
    store.revoke(record.id);
    await index.reload(); // what the dashboard's revoke does
    await early;
    try { index.authenticate(key, 'openai'); accepted++; } catch { /* revoked, as it should be */ }
    // and when a later reload (the watcher's, after the revocation) is still running
    const second = store.create({ name: `b${i}` });
    await index.reload();
    store.revoke(second.record.id);
    const mine = index.reload();
    void index.reload();
    await mine;
    try { index.authenticate(second.key, 'openai'); accepted++; } catch { /* revoked */ }
    rmSync(dir, { recursive: true, force: true });
  }
  expect(accepted).toBe(0);
});
