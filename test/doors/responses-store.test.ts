// The gateway's store of Responses answers: 0600 on disk, one proxy key's answers invisible to
// another, expiry after the retention judged by the injected clock (no sleeping), a size cap that
// drops the oldest, and answers that survive a daemon restart.
import OpenAI from 'openai';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicScript } from '../helpers/scripted-providers.js';
import { SqliteResponseStore, RESPONSES_DB_FILE } from '../../src/daemon/store/responses.js';

const DAY = 86_400_000;
let now = Date.UTC(2026, 10, 25);
let gw: TestGateway;
let a: OpenAI;
let b: OpenAI;
beforeAll(async () => {
  gw = await startTestGateway({ clock: () => now });
  gw.mocks.anthropic.setHandler(anthropicScript);
  a = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  b = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.keys.create({ name: 'other' }).key, maxRetries: 0 });
});
afterAll(async () => { await gw?.close(); });

const model = 'anthropic/claude-sonnet-4-5';

describe('the response store', () => {
  it('keeps an answer for its own key only, in a 0600 file', async () => {
    await gw.daemon.reload();
    const r = await a.responses.create({ model, input: 'hi' });
    expect((await a.responses.retrieve(r.id)).id).toBe(r.id);
    await expect(b.responses.retrieve(r.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.responses.delete(r.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.responses.create({ model, input: 'more', previous_response_id: r.id })).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
    await gw.daemon.ctx.responses.flush();
    expect(statSync(join(gw.dir, RESPONSES_DB_FILE)).mode & 0o777).toBe(0o600);
    expect((await a.responses.retrieve(r.id)).id).toBe(r.id); // still there after the write
  });

  it('forgets an answer after the retention (30 days by default)', async () => {
    const r = await a.responses.create({ model, input: 'hi' });
    await gw.daemon.ctx.responses.flush();
    now += 29 * DAY;
    expect((await a.responses.retrieve(r.id)).id).toBe(r.id);
    now += 2 * DAY;
    await expect(a.responses.retrieve(r.id)).rejects.toMatchObject({ status: 404, error: { message: `Response with id '${r.id}' not found.`, type: 'invalid_request_error' } });
    await expect(a.responses.create({ model, input: 'more', previous_response_id: r.id })).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
  });

  it('an unknown id is OpenAI\'s 404 on retrieve, delete and input_items', async () => {
    for (const call of [() => a.responses.retrieve('resp_nope'), () => a.responses.delete('resp_nope'), () => a.responses.inputItems.list('resp_nope')]) {
      await expect(call()).rejects.toMatchObject({ status: 404, code: null });
    }
  });

  it('drops the oldest answers when the file holds more than its cap, and reopens what it wrote', async () => {
    const dir = gw.dir;
    let t = now;
    const store = new SqliteResponseStore(join(dir, 'cap'), { retentionDays: 30, maxBytes: 3_000 }, () => t);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, 'cap'));
    const big = 'x'.repeat(900);
    for (let i = 0; i < 5; i++) { t += 1000; store.put({ id: `resp_${i}`, keyId: 'k', createdAt: t, previousId: null, input: [big], output: [], response: { id: `resp_${i}` } }); }
    await store.flush();
    store.prune();
    const kept = await Promise.all([0, 1, 2, 3, 4].map(async (i) => (await store.get(`resp_${i}`, 'k')) !== undefined));
    expect(kept).toEqual([false, false, true, true, true]);
    await store.close();
    const again = new SqliteResponseStore(join(dir, 'cap'), { retentionDays: 30, maxBytes: 3_000 }, () => t);
    expect((await again.get('resp_4', 'k'))?.input).toEqual([big]);
    await again.close();
  });

  it('writes a large queue in several transactions, letting other work run between them, and loses none', async () => {
    const dir = join(gw.dir, 'chunks');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir);
    const store = new SqliteResponseStore(dir, { retentionDays: 30, maxBytes: 1 << 30 }, () => now);
    await store.get('resp_none', 'k'); // the file is open: what follows is the writing alone
    for (let i = 0; i < 1_000; i++) store.put({ id: `resp_c${i}`, keyId: 'k', createdAt: now, previousId: null, input: ['hi'], output: [], response: { id: `resp_c${i}` } });
    // What another request would see mid-flush: the daemon is not held until the last row is written.
    let ranDuringFlush = false;
    const flushed = store.flush();
    setImmediate(() => { ranDuringFlush = true; });
    const racing = store.flush(); // a second flush (the timer's, or close) waits its turn
    await flushed;
    expect(ranDuringFlush).toBe(true);
    await racing;
    await store.close();
    const again = new SqliteResponseStore(dir, { retentionDays: 30, maxBytes: 1 << 30 }, () => now);
    const found = await Promise.all([0, 499, 999].map(async (i) => (await again.get(`resp_c${i}`, 'k'))?.id));
    expect(found).toEqual(['resp_c0', 'resp_c499', 'resp_c999']);
    await again.close();
  });
  it('deletes expired answers from the file, oldest first, and keeps the cap across a restart', async () => {
    const { mkdirSync } = await import('node:fs');
    const { DatabaseSync } = await import('node:sqlite');
    const dir = join(gw.dir, 'expiry');
    mkdirSync(dir);
    let t = now;
    const put = (s: SqliteResponseStore, i: number) => s.put({ id: `resp_e${i}`, keyId: 'k', createdAt: t, previousId: null, input: ['y'.repeat(400)], output: [], response: { id: `resp_e${i}` } });
    const store = new SqliteResponseStore(dir, { retentionDays: 1, maxBytes: 1 << 30 }, () => t);
    for (let i = 0; i < 6; i++) { t += 3_600_000; put(store, i); } // one an hour
    await store.flush();
    t += DAY - 3 * 3_600_000 + 1; // the first three are now older than a day
    store.prune();
    await store.close();
    const rows = () => {
      const db = new DatabaseSync(join(dir, RESPONSES_DB_FILE));
      try { return (db.prepare('SELECT id FROM responses ORDER BY rowid').all() as Array<{ id: string }>).map((r) => r.id); } finally { db.close(); }
    };
    expect(rows()).toEqual(['resp_e3', 'resp_e4', 'resp_e5']);
    // Reopened with a cap that holds two of the three: the oldest goes, counted from the file.
    const again = new SqliteResponseStore(dir, { retentionDays: 1, maxBytes: 2 * 450 }, () => t);
    await again.get('resp_e5', 'k'); // opens, and prunes what is over the cap
    await again.close();
    expect(rows()).toEqual(['resp_e4', 'resp_e5']);
  });

  it('counts a deleted answer out of the cap at once', async () => {
    const { mkdirSync } = await import('node:fs');
    const dir = join(gw.dir, 'deleted');
    mkdirSync(dir);
    let t = now;
    const store = new SqliteResponseStore(dir, { retentionDays: 30, maxBytes: 2_000 }, () => t);
    const big = 'z'.repeat(900);
    for (let i = 0; i < 2; i++) { t += 1000; store.put({ id: `resp_d${i}`, keyId: 'k', createdAt: t, previousId: null, input: [big], output: [], response: { id: `resp_d${i}` } }); }
    await store.flush();
    expect(await store.delete('resp_d1', 'k')).toBe(true);
    await store.flush();
    t += 1000;
    store.put({ id: 'resp_d2', keyId: 'k', createdAt: t, previousId: null, input: [big], output: [], response: { id: 'resp_d2' } });
    await store.flush();
    store.prune(); // two answers of ~920 bytes fit in 2,000: the deleted one no longer counts
    expect((await store.get('resp_d0', 'k'))?.id).toBe('resp_d0');
    expect((await store.get('resp_d2', 'k'))?.id).toBe('resp_d2');
    await store.close();
  });
});
