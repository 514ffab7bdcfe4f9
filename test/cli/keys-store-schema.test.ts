// The keys CLI on a team's store with no daemon of its version running: it acts on the database
// directly, and never upgrades its schema. A newer CLI that upgraded the team's schema would leave
// every older daemon of the team unable to start again; so an older or a newer schema is refused
// with one line saying what to do, and the database is left as it was. A database with no schema
// yet gets this build's, as the first daemon's start would make it (keys made before any daemon).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePg, PG_MIGRATIONS, PG_SCHEMA_VERSION } from '../../src/daemon/store/pg-schema.js';
import { makeTempHome, runCli } from '../helpers/cli.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

let postgres: TestPostgres;
const home = makeTempHome('gateway-keys-schema-');
const pools: pg.Pool[] = [];

/** A database of its own, with `migrations` applied (none: not even the version table). */
async function database(name: string, migrations: readonly (typeof PG_MIGRATIONS)[number][]): Promise<{ url: string; pool: pg.Pool }> {
  const url = await postgres.database(name);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pools.push(pool);
  if (migrations.length > 0) await migratePg(pool, migrations);
  return { url, pool };
}

const versions = async (pool: pg.Pool) => (await pool.query<{ version: number }>('SELECT version FROM gateway_schema ORDER BY version')).rows.map((r) => r.version);
const tables = async (pool: pg.Pool) => Number((await pool.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'")).rows[0]!.n);
const keysList = (url: string) => runCli(['keys', 'list', '--json'], { home: home.dir, env: { GATEWAY_STORE_URL: url }, timeoutMs: 30_000 });

beforeAll(async () => { postgres = await startPostgres(); }, 120_000);
afterAll(async () => {
  for (const p of pools) await p.end();
  postgres?.destroy();
  home.cleanup();
});

describe('gateway keys on a store whose schema is not this build\'s', () => {
  it('a store of this build\'s schema is used', async () => {
    const { url } = await database('current', PG_MIGRATIONS);
    const r = await keysList(url);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
  }, 60_000);

  it('an older schema is refused, and not migrated', async () => {
    const older = PG_MIGRATIONS.slice(0, -1);
    const { url, pool } = await database('older', older);
    const r = await keysList(url);
    expect(r.code).not.toBe(0);
    const at = postgres.url.replace(/^postgres:\/\/gw:[^@]+@/, 'gw@').replace(/\/postgres$/, '/older');
    expect(r.stderr).toBe(`error: the store at ${at}: its schema is version ${older.at(-1)!.version}, older than this gateway's (${PG_SCHEMA_VERSION}): start a daemon of this version on it first, or run gateway store migrate (either migrates the schema; this command never does)\n`);
    expect(await versions(pool)).toEqual(older.map((m) => m.version));
  }, 60_000);

  it('a database with no schema yet gets this build\'s (no daemon can be running an older one on it)', async () => {
    const { url, pool } = await database('empty', []);
    expect(await tables(pool)).toBe(0);
    const r = await keysList(url);
    expect(r.code, r.stderr).toBe(0);
    expect(await versions(pool)).toEqual(PG_MIGRATIONS.map((m) => m.version));
  }, 60_000);

  it('a newer schema is refused: upgrade', async () => {
    const { url, pool } = await database('newer', PG_MIGRATIONS);
    await pool.query("INSERT INTO gateway_schema (version, description) VALUES ($1, 'from a newer gateway')", [PG_SCHEMA_VERSION + 1]);
    const r = await keysList(url);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(new RegExp(`^error: the store at \\S+/newer: the store has schema version ${PG_SCHEMA_VERSION + 1}, newer than this gateway understands \\(${PG_SCHEMA_VERSION}\\); upgrade model-gateway\\n$`));
    expect(r.stderr).not.toContain(postgres.password);
  }, 60_000);
});
