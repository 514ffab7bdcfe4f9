// Revocation from the dashboard must apply to the very next request, even while the key index's
// file watcher is reloading the same file: an older reload must never publish after a newer one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { KeyIndex } from '../../src/daemon/access/auth.js';
import { GatewayError } from '../../src/daemon/http/errors.js';
import { KeyStore } from '../../src/daemon/store/keys.js';

/** What the index answers for a key: "accepted", or the refusal's code (any other throw propagates). */
function answer(index: KeyIndex, key: string): string {
  try {
    index.authenticate(key, 'openai');
    return 'accepted';
  } catch (e) {
    if (e instanceof GatewayError) return e.code;
    throw e;
  }
}

it('once the reload after a revocation resolves, the key is refused', async () => {
  // Every round's answers, so a failure shows which step went wrong and how often.
  const wrong: string[] = [];
  const check = (round: number, step: string, got: string, want: string) => { if (got !== want) wrong.push(`round ${round}, ${step}: ${got}, not ${want}`); };
  for (let i = 0; i < 200; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-race-'));
    try {
      const store = new KeyStore(dir);
      const { key, record } = store.create({ name: 'a' });
      const index = new KeyIndex(dir);
      await index.reload();
      check(i, 'a key before its revocation', answer(index, key), 'accepted');
      const early = index.reload(); // the watcher's, reading the file as it was
      store.revoke(record.id);
      await index.reload(); // what the dashboard's revoke does
      await early;
      check(i, 'the key after an earlier reload raced its revocation', answer(index, key), 'key_revoked');
      // and when a later reload (the watcher's, after the revocation) is still running
      const second = store.create({ name: `b${i}` });
      await index.reload();
      check(i, 'a second key before its revocation', answer(index, second.key), 'accepted');
      store.revoke(second.record.id);
      const mine = index.reload();
      void index.reload();
      await mine;
      check(i, 'the second key while a later reload runs', answer(index, second.key), 'key_revoked');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  expect(wrong).toEqual([]);
});
