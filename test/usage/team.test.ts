// Team mode's usage history: three real daemons (`gateway start`, one GATEWAY_HOME each, the store
// in GATEWAY_STORE_URL as a user would set it) on one real PostgreSQL database, against mock
// providers. Every request shows up once in `gateway usage` run against any daemon, with the
// daemon that served it; a daemon SIGKILLed mid-load and started again loses no row its clients
// got an answer for and doubles none; PostgreSQL stopped under load costs no request and no row;
// and a laptop daemon (no store) records its daemon without an outbox.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredRequest, UsageGroup } from '../../src/daemon/observe/usage/queries.js';
import { UsageStore } from '../../src/daemon/observe/usage/store.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { until } from '../helpers/wait.js';
import { dashboardSession, startGatewayProcess, type GatewayProcess } from './gateway-process.js';

let postgres: TestPostgres;
let url: string;
const daemons: GatewayProcess[] = [];
const keys = new Map<GatewayProcess, string>();
const IDS = ['team-a', 'team-b', 'team-c'] as const;

beforeAll(async () => {
  postgres = await startPostgres();
  url = await postgres.database('usage_team');
  // One after the other: the first migrates the schema (the others would wait for its lock anyway).
  for (const id of IDS) daemons.push(await startGatewayProcess({ GATEWAY_STORE_URL: url, GATEWAY_DAEMON_ID: id }));
  for (const gw of daemons) keys.set(gw, (await gw.cli(['keys', 'create', '--name', `load-${gw.dir.slice(-6)}`])).stdout.trim());
}, 120_000);

afterAll(async () => {
  await Promise.all(daemons.map((gw) => gw.close()));
  postgres?.destroy();
});

/** One native Gemini call whose model name is unique (the mock answers any): how a row is found again. */
async function call(gw: GatewayProcess, model: string): Promise<number> {
  const res = await fetch(`${gw.url}/gemini/v1beta/models/${model}:generateContent`, {
    method: 'POST', headers: { 'x-goog-api-key': keys.get(gw)!, 'content-type': 'application/json' },
    body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }),
  });
  await res.text();
  return res.status;
}

async function requests(gw: GatewayProcess): Promise<StoredRequest[]> {
  const r = await gw.cli(['usage', '--requests', '--since', '1d', '--limit', '100000', '--json']);
  if (r.code !== 0) throw new Error(`gateway usage --requests failed: ${r.stdout}${r.stderr}`);
  return (JSON.parse(r.stdout) as { rows: StoredRequest[] }).rows;
}

/** How many rows each model has in `rows`, for the models starting with `prefix`. */
function countByModel(rows: readonly StoredRequest[], prefix: string): Map<string, StoredRequest[]> {
  const out = new Map<string, StoredRequest[]>();
  for (const r of rows) if (r.model?.startsWith(prefix)) out.set(r.model, [...(out.get(r.model) ?? []), r]);
  return out;
}

async function waitFor(what: string, cond: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Waits until every daemon's history holds each of `served` (model → daemon id) and nothing else with `prefix`; returns the last read of each. */
async function everyDaemonHasAll(prefix: string, served: ReadonlyMap<string, string>): Promise<Map<GatewayProcess, Map<string, StoredRequest[]>>> {
  const seen = new Map<GatewayProcess, Map<string, StoredRequest[]>>();
  for (const gw of daemons) {
    await waitFor(`${served.size} ${prefix} rows on ${gw.url}`, async () => {
      const rows = countByModel(await requests(gw), prefix);
      seen.set(gw, rows);
      return [...served.keys()].every((m) => rows.has(m));
    });
  }
  return seen;
}

interface Done { model: string; daemon: string; status: number; at: number }

/** Clients calling every daemon until `stop()`: what each got back. */
function load(prefix: string, perDaemon: number): { done: Done[]; attempted: Set<string>; stop(): Promise<void> } {
  const done: Done[] = [];
  const attempted = new Set<string>();
  let stopped = false;
  const worker = async (gw: GatewayProcess, i: number, w: number) => {
    for (let n = 0; !stopped; n++) {
      const model = `${prefix}-${IDS[i]}-${w}-${n}`;
      attempted.add(model);
      try {
        const status = await call(gw, model);
        done.push({ model, daemon: IDS[i]!, status, at: Date.now() });
      } catch {
        if (!gw.alive()) return; // killed: this client got no answer
      }
    }
  };
  const running = daemons.flatMap((gw, i) => Array.from({ length: perDaemon }, (_, w) => worker(gw, i, w)));
  return { done, attempted, async stop() { stopped = true; await Promise.all(running); } };
}

const servedBy = (done: readonly Done[]): Map<string, string> => new Map(done.filter((d) => d.status === 200).map((d) => [d.model, d.daemon]));

async function pgRows(prefix: string): Promise<Array<{ model: string; daemon: string; n: number }>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ model: string; daemon: string; n: string }>(
      'SELECT model, daemon, count(*) AS n FROM usage_requests WHERE model LIKE $1 GROUP BY model, daemon', [`${prefix}%`]);
    return rows.map((r) => ({ model: r.model, daemon: r.daemon, n: Number(r.n) }));
  } finally {
    await c.end();
  }
}

describe('team usage history on one PostgreSQL', () => {
  it('requests spread over three daemons appear once each in gateway usage on every daemon, with the daemon that served them', async () => {
    const served = new Map<string, string>();
    await Promise.all(daemons.map(async (gw, i) => {
      for (let n = 0; n < 10; n++) {
        const model = `spread-${IDS[i]}-${n}`;
        expect(await call(gw, model)).toBe(200);
        served.set(model, IDS[i]!);
      }
    }));
    const t0 = Date.now();
    const seen = await everyDaemonHasAll('spread-', served);
    console.log(`spread test: every daemon showed all ${served.size} rows ${Date.now() - t0} ms after the last answer (polling gateway usage)`);
    for (const gw of daemons) {
      const rows = seen.get(gw)!;
      expect([...rows.keys()].sort()).toEqual([...served.keys()].sort());
      for (const [model, list] of rows) {
        expect(list).toHaveLength(1);
        expect(list[0]!.daemon).toBe(served.get(model));
      }
      const byDaemon = JSON.parse((await gw.cli(['usage', '--since', '1d', '--by', 'daemon', '--json'])).stdout) as { rows: UsageGroup[]; totals: { requests: number } };
      expect(Object.fromEntries(byDaemon.rows.map((g) => [g.group, g.requests]))).toEqual({ 'team-a': 10, 'team-b': 10, 'team-c': 10 });
      expect(byDaemon.totals.requests).toBe(30);
      const table = (await gw.cli(['usage', '--since', '1d', '--by', 'daemon'])).stdout;
      for (const id of IDS) expect(table).toMatch(new RegExp(`^${id}\\s+10\\s`, 'm'));
      // The dashboard's requests table lists the other daemons' requests too.
      const page = await (await fetch(`${gw.url}/dashboard/usage?range=24h`, { headers: { cookie: await dashboardSession(gw) } })).text();
      for (const model of served.keys()) expect(page).toContain(`>${model}<`);
      // With the daemon that served each, and what each daemon served.
      for (const id of IDS) {
        expect(page.split(`data-daemon="${id}"`)).toHaveLength(11);
        expect(page).toMatch(new RegExp(`id="by-daemon"[^]*<tr data-group="${id}" data-requests="10"`));
      }
    }
  }, 120_000);

  it('a daemon SIGKILLed mid-load and started again: every answered request is in the history exactly once', async () => {
    const b = daemons[1]!;
    const l = load('kill', 6);
    await waitFor('load on every daemon', async () => IDS.every((id) => l.done.filter((d) => d.daemon === id).length >= 150));
    process.kill(b.pid, 'SIGKILL');
    await waitFor('the killed daemon to be gone', async () => !b.alive(), 10_000);
    await l.stop();
    await b.restart();

    const served = servedBy(l.done);
    expect(l.done.every((d) => d.status === 200)).toBe(true);
    const seen = await everyDaemonHasAll('kill-', served);
    for (const gw of daemons) {
      for (const [model, list] of seen.get(gw)!) {
        expect(list, `${model} on ${gw.url}`).toHaveLength(1);
        expect(l.attempted.has(model)).toBe(true);
        if (served.has(model)) expect(list[0]!.daemon).toBe(served.get(model));
      }
    }
    const inStore = await pgRows('kill-');
    expect(inStore.filter((r) => r.n !== 1)).toEqual([]);
    for (const [model, daemon] of served) expect(inStore.find((r) => r.model === model)?.daemon, model).toBe(daemon);
    const answeredByB = [...served.values()].filter((d) => d === 'team-b').length;
    console.log(`kill test: ${served.size} answered requests (${answeredByB} by the killed daemon), ${inStore.length} in the store`);
  }, 180_000);

  it('PostgreSQL stopped for a few seconds under load: requests are served throughout and the history is complete after it returns', async () => {
    const l = load('outage', 4);
    const count = (id: string, since: number) => l.done.filter((d) => d.daemon === id && d.at > since).length;
    await waitFor('load on every daemon', async () => IDS.every((id) => count(id, 0) >= 30));
    postgres.stop();
    const stoppedAt = Date.now();
    // Served while the store is down (a few seconds of it), their rows held in each daemon's outbox.
    await waitFor('requests served with the store down', async () => Date.now() - stoppedAt >= 3_000 && IDS.every((id) => count(id, stoppedAt) >= 50));
    for (const gw of daemons) {
      const status = await (await fetch(`${gw.url}/admin/usage/status`, { headers: { authorization: `Bearer ${gw.adminToken()}` } })).json() as { team?: { outbox: number } };
      expect(status.team?.outbox, gw.url).toBeGreaterThan(0);
    }
    postgres.start();
    const startedAt = Date.now();
    await waitFor('requests served after the store is back', async () => IDS.every((id) => count(id, startedAt) >= 30));
    await l.stop();

    expect(l.done.filter((d) => d.status !== 200)).toEqual([]);
    const served = servedBy(l.done);
    const seen = await everyDaemonHasAll('outage-', served);
    for (const gw of daemons) {
      expect([...seen.get(gw)!.keys()].sort()).toEqual([...served.keys()].sort());
      for (const list of seen.get(gw)!.values()) expect(list).toHaveLength(1);
      await waitFor(`the outbox of ${gw.url} to drain`, async () => {
        const status = await (await fetch(`${gw.url}/admin/usage/status`, { headers: { authorization: `Bearer ${gw.adminToken()}` } })).json() as { team?: { outbox: number } };
        return status.team?.outbox === 0;
      });
    }
    const inStore = await pgRows('outage-');
    expect(inStore.length).toBe(served.size);
    expect(inStore.filter((r) => r.n !== 1)).toEqual([]);
    console.log(`outage test: ${served.size} requests, ${IDS.map((id) => `${id} ${count(id, stoppedAt) - count(id, startedAt)}`).join(', ')} served during the ${startedAt - stoppedAt} ms the store was down`);
  }, 180_000);
});

describe('an answer and its journaled row', () => {
  // The journal writes each turn's rows at the end of the turn, and the answers wait for the write;
  // a request alone in flight is answered at once and its row written right after. Here the
  // journal is a FIFO with no reader: the daemon's open of it waits (in the kernel's
  // wait_for_partner) until the test reads it. Whatever of the answer the daemon had sent by then
  // is in this client's socket by the next turn.
  //
  // `kind`: an answer (its row recorded as its response ends, or just after); a request refused
  // before it is tracked (a bad proxy key: its row is recorded before its error is sent); a
  // request that fails after it is tracked (a provider's answer that is not JSON: its record ends,
  // then the error boundary sends the error). In the last two the row is journaled before the
  // answer ends, so the request no longer counts as in flight when it does.
  type Kind = 'answer' | 'refused' | 'failed';
  const EXPECTED: Record<Kind, { status: number; row: Record<string, unknown>; last: RegExp }> = {
    answer: { status: 200, row: { model: 'journaled-1' }, last: /\r\n0\r\n\r\n$/ },
    refused: { status: 401, row: { provider: 'gemini', errorCode: 'invalid_api_key' }, last: /\}$/ },
    failed: { status: 502, row: { provider: 'gemini', path: '/v1/chat/completions' }, last: /\}$/ },
  };
  async function journaledRow(otherInFlight: boolean, kind: Kind = 'answer'): Promise<void> {
    const daemon = `team-j${otherInFlight ? 2 : 1}-${kind}`;
    const gw = await startGatewayProcess({ GATEWAY_STORE_URL: url, GATEWAY_DAEMON_ID: daemon });
    const sockets: Socket[] = [];
    const post = (path: string, headers: string, body: string) => {
      const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
      sockets.push(socket);
      socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\n${headers}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return socket;
    };
    const send = (model: string, key: string) => post(`/gemini/v1beta/models/${model}:generateContent`, `x-goog-api-key: ${key}\r\n`, JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }));
    try {
      const key = (await gw.cli(['keys', 'create', '--name', `journaled-${daemon}`])).stdout.trim();
      gw.mocks.gemini.setHandler((r) => (r.url.includes('never-answered') ? { hang: true }
        : r.url.includes('journaled-1') && kind === 'failed' ? { status: 200, headers: { 'content-type': 'application/json' }, body: 'not json' } : undefined));
      if (otherInFlight) {
        // A request the provider never answers: in flight throughout, so the answer below is held for the turn's write.
        send('never-answered', key);
        await gw.mocks.gemini.waitForRequests(1, 30_000);
      }
      // The first segment of a fresh daemon's journal, opened with its first row.
      const journal = join(gw.dir, 'usage-journal', 'usage.journal.1');
      execFileSync('mkfifo', [journal]);
      const received: Buffer[] = [];
      const socket = kind === 'refused' ? send('journaled-1', 'sk-proxy-not-a-key')
        : kind === 'failed' ? post('/v1/chat/completions', `authorization: Bearer ${key}\r\n`, JSON.stringify({ model: 'gemini/journaled-1', messages: [{ role: 'user', content: 'hi' }] }))
        : send('journaled-1', key);
      socket.on('data', (d: Buffer) => received.push(d));
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      const blocked = () => readFileSync(`/proc/${gw.pid}/wchan`, 'utf8') === 'wait_for_partner';
      await until('the daemon waiting to open its journal', blocked, 30_000, 10);
      const { status, row, last } = EXPECTED[kind];
      if (otherInFlight) {
        await new Promise((r) => setImmediate(r)); // one turn: bytes already sent are read by now
        expect(Buffer.concat(received).toString()).toBe('');
      } else {
        // Alone in flight: its answer went first, and its row is being written right after it, before anything else.
        // The whole answer: its status line and its last bytes.
        await until('the lone answer', () => new RegExp(`^HTTP/1\\.1 ${status} `).test(Buffer.concat(received).toString()) && last.test(Buffer.concat(received).toString()), 30_000, 10);
        expect(blocked()).toBe(true);
      }

      const reader = await open(journal, 'r');
      let line = '';
      while (!line.includes('\n')) {
        const { bytesRead, buffer } = await reader.read(Buffer.alloc(65536), 0, 65536, null);
        if (bytesRead === 0) break;
        line += buffer.subarray(0, bytesRead).toString();
      }
      expect(JSON.parse(line.split('\n')[0]!)).toMatchObject({ ...row, status, daemon });
      await closed;
      expect(Buffer.concat(received).toString()).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      await reader.close();
    } finally {
      for (const s of sockets) s.destroy();
      gw.mocks.gemini.setHandler(undefined);
      await gw.close();
    }
  }

  it('with other requests in flight, the client gets its answer only after the request\'s row is in the journal (what makes a SIGKILL under load lose no answered row)', async () => {
    await journaledRow(true);
  }, 60_000);

  it('a request alone in flight gets its answer at once, and its row is written right after it, before the daemon does anything else', async () => {
    await journaledRow(false);
  }, 60_000);

  it('a request refused before it is tracked, beside one other in flight, gets its error only after its row is in the journal', async () => {
    await journaledRow(true, 'refused');
  }, 60_000);

  it('a request whose record ends before its error is sent, beside one other in flight, gets the error only after its row is in the journal', async () => {
    await journaledRow(true, 'failed');
  }, 60_000);
});

describe('laptop mode', () => {
  it('records the daemon in each row and keeps no outbox or journal', async () => {
    const gw = await startGatewayProcess({ GATEWAY_DAEMON_ID: 'laptop' });
    try {
      keys.set(gw, (await gw.cli(['keys', 'create', '--name', 'solo'])).stdout.trim());
      for (let n = 0; n < 3; n++) expect(await call(gw, `solo-${n}`)).toBe(200);
      const rows = await requests(gw);
      expect(rows.map((r) => [r.model, r.daemon]).sort()).toEqual([['solo-0', 'laptop'], ['solo-1', 'laptop'], ['solo-2', 'laptop']]);
      const byDaemon = JSON.parse((await gw.cli(['usage', '--by', 'daemon', '--json'])).stdout) as { rows: UsageGroup[] };
      expect(byDaemon.rows.map((g) => [g.group, g.requests])).toEqual([['laptop', 3]]);
      const table = (await gw.cli(['usage', '--requests', '--limit', '2'])).stdout;
      expect(table.split('\n')[0]).toMatch(/^TIME\s+DAEMON\s+KEY\s+MODEL\s+STATUS/);
      expect(table).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+laptop\s+solo\s+gemini\/solo-2\s+200\s/m);
      expect(table).not.toContain('solo-0');
      expect(table).toContain('raise --limit');
      expect((await gw.cli(['stop'])).code).toBe(0);
      expect(readdirSync(gw.dir).filter((f) => f.startsWith('usage.journal') || f === 'usage-journal')).toEqual([]);
      const store = await UsageStore.open(join(gw.dir, 'usage.db'));
      expect(store.outboxSize()).toBe(0);
      store.close();
    } finally {
      await gw.close();
    }
  }, 60_000);
});
