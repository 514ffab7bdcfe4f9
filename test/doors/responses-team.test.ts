// A Responses conversation across a team: three real daemons (`gateway start --store`, each in its
// own state directory) on one PostgreSQL database, one mock Anthropic behind them, the openai SDK
// as the client. A chain goes A → B → C with the provider seeing the whole conversation each
// turn, streamed answers included; an answer made on one daemon is read on the others, another
// proxy key gets a 404 everywhere, and a deletion on one is seen by all. With the database
// stopped, new answers are still served and a chain only the database holds is a 503 in OpenAI's
// shape; once it is back, what was answered meanwhile is on every daemon.
// The keys are made with the CLI on the shared store itself (GATEWAY_STORE_URL, before any daemon runs).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempHome, runCli } from '../helpers/cli.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { FINAL_TEXT, anthropicScript } from '../helpers/scripted-providers.js';

interface Daemon { name: string; home: string; url: string; pid: number }

const model = 'anthropic/claude-sonnet-4-5';
let postgres: TestPostgres;
let storeUrl = '';
let anthropic: MockProvider;
let env: Record<string, string>;
const homes = ['a', 'b', 'c'].map((name) => ({ name, ...makeTempHome(`gateway-team-${name}-`) }));
const daemons: Daemon[] = [];
let key = '';
let otherKey = '';

const cli = (home: string, args: string[], extra: Record<string, string> = {}) => runCli(args, { home, env: { ...env, ...extra }, timeoutMs: 30_000 });

beforeAll(async () => {
  postgres = await startPostgres();
  storeUrl = await postgres.database('responses_team');
  anthropic = await startMockProvider('anthropic');
  anthropic.setHandler(anthropicScript);
  env = {
    GATEWAY_ANTHROPIC_BASE_URL: anthropic.origin, GATEWAY_ANTHROPIC_API_KEY: anthropic.key,
    // Never the user's keychain: a bus that does not exist.
    GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/no-bus-here',
  };
  const a = homes[0]!;
  const made = async (name: string) => {
    const r = await cli(a.dir, ['keys', 'create', '--name', name], { GATEWAY_STORE_URL: storeUrl });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  };
  key = await made('team');
  otherKey = await made('other');
  for (const h of homes) {
    const r = await cli(h.dir, ['start', '--port', '0', '--store', storeUrl], { GATEWAY_DAEMON_ID: h.name });
    const m = /gateway running at (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)/.exec(r.stdout);
    if (!m) throw new Error(`daemon ${h.name} did not start: ${r.stdout}${r.stderr}`);
    daemons.push({ name: h.name, home: h.dir, url: m[1]!, pid: Number(m[2]) });
  }
}, 180_000);

afterAll(async () => {
  for (const d of daemons) {
    await cli(d.home, ['stop']).catch(() => undefined);
    try { process.kill(d.pid, 'SIGKILL'); } catch { /* stopped */ }
  }
  await anthropic?.close();
  postgres?.destroy();
  for (const h of homes) h.cleanup();
}, 60_000);

const on = (i: number, apiKey = key) => new OpenAI({ baseURL: `${daemons[i]!.url}/v1`, apiKey, maxRetries: 0 });
const text = (content: unknown): string => (typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((c) => c.text ?? '').join(''));
/** What the provider was last sent: each message's role and text. */
const lastSent = () => (JSON.parse(anthropic.requests.at(-1)!.body.toString('utf8')) as { messages: Array<{ role: string; content: unknown }> }).messages.map((m) => `${m.role}: ${text(m.content)}`);

/** The answer's text (a streamed response object has no output_text: the SDK adds it to whole answers only). */
const said = (r: OpenAI.Responses.Response): string => r.output.flatMap((o) => (o.type === 'message' ? o.content.map((c) => (c.type === 'output_text' ? c.text : '')) : [])).join('');

async function streamed(client: OpenAI, params: { input: string; previous_response_id?: string }): Promise<OpenAI.Responses.Response> {
  const stream = await client.responses.create({ model, ...params, stream: true });
  let done: OpenAI.Responses.Response | undefined;
  for await (const ev of stream) if (ev.type === 'response.completed') done = ev.response;
  if (!done) throw new Error('the stream ended without response.completed');
  return done;
}

describe('previous_response_id across three daemons on one store', () => {
  it('turn 1 on A, 2 on B, 3 on C: the provider sees the whole conversation each turn', async () => {
    const t1 = await on(0).responses.create({ model, input: 'My name is Ada.' });
    expect(t1.output_text).toBe(FINAL_TEXT);
    expect(lastSent()).toEqual(['user: My name is Ada.']);
    // The next turn leaves for B the moment A's answer is in: B finds it, waiting for A's insert if it must.
    const t2 = await on(1).responses.create({ model, input: 'What is my name?', previous_response_id: t1.id });
    expect(t2.previous_response_id).toBe(t1.id);
    expect(lastSent()).toEqual(['user: My name is Ada.', `assistant: ${FINAL_TEXT}`, 'user: What is my name?']);
    const t3 = await on(2).responses.create({ model, input: 'Spell it.', previous_response_id: t2.id });
    expect(t3.output_text).toBe(FINAL_TEXT);
    expect(lastSent()).toEqual(['user: My name is Ada.', `assistant: ${FINAL_TEXT}`, 'user: What is my name?', `assistant: ${FINAL_TEXT}`, 'user: Spell it.']);
  });

  it('streamed answers are stored too, and continued on another daemon, streamed or not', async () => {
    const t1 = await streamed(on(2), { input: 'Remember: Paris.' });
    expect(said(t1)).toBe(FINAL_TEXT);
    const t2 = await streamed(on(0), { input: 'Where?', previous_response_id: t1.id });
    expect(lastSent()).toEqual(['user: Remember: Paris.', `assistant: ${FINAL_TEXT}`, 'user: Where?']);
    await on(1).responses.create({ model, input: 'Again?', previous_response_id: t2.id });
    expect(lastSent()).toEqual(['user: Remember: Paris.', `assistant: ${FINAL_TEXT}`, 'user: Where?', `assistant: ${FINAL_TEXT}`, 'user: Again?']);
    const read = await on(1).responses.retrieve(t2.id);
    expect(read).toMatchObject({ id: t2.id, status: 'completed', previous_response_id: t1.id, output_text: FINAL_TEXT });
  });

  it('an answer made on one daemon is retrieved, with its input items, on the others', async () => {
    const made = await on(1).responses.create({ model, input: 'Hello from B.' });
    for (const i of [0, 2, 1]) {
      const read = await on(i).responses.retrieve(made.id);
      expect(read).toMatchObject({ id: made.id, output_text: FINAL_TEXT });
      expect(read.output).toEqual(made.output);
    }
    const items = await on(2).responses.inputItems.list(made.id);
    expect(items.data.map((it) => text((it as { content?: unknown }).content ?? ''))).toEqual(['Hello from B.']);
  });

  it('another proxy key gets a 404 on every daemon, and cannot continue or delete it', async () => {
    const made = await on(0).responses.create({ model, input: 'Mine only.' });
    for (const i of [0, 1, 2]) {
      await expect(on(i, otherKey).responses.retrieve(made.id)).rejects.toMatchObject({ status: 404, error: { message: `Response with id '${made.id}' not found.` } });
      await expect(on(i, otherKey).responses.delete(made.id)).rejects.toMatchObject({ status: 404 });
      await expect(on(i, otherKey).responses.create({ model, input: 'x', previous_response_id: made.id })).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
    }
    expect((await on(2).responses.retrieve(made.id)).id).toBe(made.id);
  });

  it('a deletion on one daemon is seen by the others at once', async () => {
    const t1 = await on(0).responses.create({ model, input: 'Forget me.' });
    expect((await on(2).responses.retrieve(t1.id)).id).toBe(t1.id);
    await on(1).responses.delete(t1.id);
    for (const i of [0, 2, 1]) await expect(on(i).responses.retrieve(t1.id)).rejects.toMatchObject({ status: 404 });
    await expect(on(2).responses.create({ model, input: 'And?', previous_response_id: t1.id })).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
  });

  // Last: it stops the database.
  it('with the database stopped: new answers are served, a chain only it holds is a 503; afterwards the answers are everywhere', async () => {
    const before = await on(1).responses.create({ model, input: 'Made on B.' });
    expect((await on(0).responses.retrieve(before.id)).id).toBe(before.id);
    postgres.stop();
    try {
      const fresh = await on(0).responses.create({ model, input: 'While the store is down.' });
      expect(fresh.output_text).toBe(FINAL_TEXT);
      // A's own new answer goes on on A (it waits in A's memory for the database).
      const next = await on(0).responses.create({ model, input: 'Still there?', previous_response_id: fresh.id });
      expect(lastSent()).toEqual(['user: While the store is down.', `assistant: ${FINAL_TEXT}`, 'user: Still there?']);
      // B's answer lives only in the database: not a 404, a 503 that says why.
      const err = await on(0).responses.create({ model, input: 'More.', previous_response_id: before.id }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err).toMatchObject({ status: 503, type: 'server_error', code: 'response_store_unavailable' });
      expect((err as Error).message).toMatch(new RegExp(`the stored response '${before.id}' cannot be read now: the store at gw@127\\.0\\.0\\.1:\\d+/responses_team: .*; try again shortly`));
      await expect(on(2).responses.retrieve(before.id)).rejects.toMatchObject({ status: 503, code: 'response_store_unavailable' });

      postgres.start();
      // A writes what it kept once it finds the database again; then C has the whole chain.
      await expect.poll(() => on(2).responses.retrieve(next.id).then((r) => r.id, (e: { status?: number }) => e.status), { timeout: 30_000, interval: 250 }).toBe(next.id);
      await on(2).responses.create({ model, input: 'And now?', previous_response_id: next.id });
      expect(lastSent()).toEqual(['user: While the store is down.', `assistant: ${FINAL_TEXT}`, 'user: Still there?', `assistant: ${FINAL_TEXT}`, 'user: And now?']);
    } finally {
      try { postgres.start(); } catch { /* already running */ }
    }
  }, 90_000);
});
