import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, StoreError, type Store } from '../../src/store/index.js';
import { migrate, schemaVersion } from '../../src/store/migrate.js';
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/migrations/index.js';
import type { Engine } from '../../src/store/engine.js';
import { database, ENGINES, freshDatabaseUrl, openEngine, type EngineName } from '../support/store.js';

/** The same numbered migrations on both engines: fresh, upgrade from the first, concurrent, and refusal of a newer schema. */
const logger = pino({ level: 'silent' });
const run = promisify(execFile);
let opened: Array<Engine | Store> = [];
afterEach(async () => {
  await Promise.all(opened.map((o) => o.close()));
  opened = [];
});

async function engineFor(url: string): Promise<Engine> {
  const db = database(url);
  const engine = await openEngine(db);
  opened.push(engine);
  return engine;
}

describe.each(ENGINES)('migrations on %s', (engine: EngineName) => {
  it('build a fresh store to the latest version, and a second run does nothing', async () => {
    const url = await freshDatabaseUrl(engine);
    const e = await engineFor(url);
    const first = await migrate(e);
    expect(first).toEqual({ from: 0, to: LATEST_VERSION, applied: MIGRATIONS.map((m) => `${m.version} ${m.name}`) });
    expect(await schemaVersion(e)).toBe(LATEST_VERSION);
    expect(await migrate(e)).toEqual({ from: LATEST_VERSION, to: LATEST_VERSION, applied: [] });
    // Every table the code reads exists and is empty but for the change counter.
    expect(await e.db.selectFrom('store_revision').selectAll().execute()).toEqual([{ id: 1, revision: 0 }]);
    expect(await e.db.selectFrom('evaluations').selectAll().execute()).toEqual([]);
  });

  it('upgrade a store made by the first version, keeping its data', async () => {
    const url = await freshDatabaseUrl(engine);
    const e = await engineFor(url);
    expect((await migrate(e, MIGRATIONS.slice(0, 1))).applied).toEqual([`1 ${MIGRATIONS[0]!.name}`]);
    // Data written by that version: an account with a key and a rule set.
    await e.db.insertInto('accounts').values({ id: 'acme', name: 'Acme', status: 'active', env_keys: 0, created_at: 1 }).execute();
    await e.db.insertInto('api_keys').values({ id: 'key_000000000001', account_id: 'acme', hash: `sha256:${'1'.repeat(64)}`, prefix: null, created_at: 1, created_by: 'test', last_used_at: null, revoked_at: null }).execute();
    await e.db.insertInto('rule_set_versions').values({ account_id: 'acme', event_type: 'signup', version: 1, status: 'published', yaml: 'rules: []\n', author: 'test', comment: null, created_at: 1, published_at: 1 }).execute();

    const store = await openStore({ database: database(url), logger, retentionDays: 30, writeLog: true });
    opened.push(store);
    expect(store.migration).toEqual({ from: 1, to: LATEST_VERSION, applied: MIGRATIONS.slice(1).map((m) => `${m.version} ${m.name}`) });
    const snapshot = await store.snapshot();
    expect(snapshot.keys).toEqual([{ id: 'key_000000000001', hash: `sha256:${'1'.repeat(64)}`, account_id: 'acme' }]);
    expect(snapshot.ruleSets).toEqual([expect.objectContaining({ account_id: 'acme', event_type: 'signup', version: 1, yaml: 'rules: []\n' })]);
  });

  it('let processes starting together migrate one at a time (npm run db:migrate)', async () => {
    const url = await freshDatabaseUrl(engine);
    const runs = await Promise.all([1, 2, 3].map(() => run(process.execPath, ['--import', 'tsx', 'src/cli/db-migrate.ts'], { env: { PATH: process.env.PATH, DATABASE_URL: url } })));
    const said = runs.map((r) => r.stdout.trim().split('\n')[0]!.replace(/^.*: /, '')).sort();
    expect(said).toEqual([`at schema version ${LATEST_VERSION} of ${LATEST_VERSION}, nothing to do`, `at schema version ${LATEST_VERSION} of ${LATEST_VERSION}, nothing to do`, `migrated from schema version 0 to ${LATEST_VERSION}:`]);
  }, 60_000);

  it('refuse a database migrated by a newer version, naming DATABASE_URL', async () => {
    const url = await freshDatabaseUrl(engine);
    const e = await engineFor(url);
    await migrate(e);
    const newer = { version: LATEST_VERSION + 1, name: 'from the future', up: async () => {} };
    await migrate(e, [...MIGRATIONS, newer]);
    const error = await openStore({ database: database(url), logger, retentionDays: 0, writeLog: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/^DATABASE_URL \(.+\): the database is at schema version (\d+) \(from the future\), newer than this version of the service knows \((\d+)\)/);
    expect((error as Error).message).toContain(`schema version ${LATEST_VERSION + 1} (from the future), newer than this version of the service knows (${LATEST_VERSION})`);
  });

  it('are listed in ascending version order, each once', () => {
    const versions = MIGRATIONS.map((m) => m.version);
    expect(versions[0]).toBe(1);
    for (let i = 1; i < versions.length; i++) expect(versions[i]!).toBeGreaterThan(versions[i - 1]!);
  });

  it('leave the schema as it was when a migration fails', async () => {
    const url = await freshDatabaseUrl(engine);
    const e = await engineFor(url);
    const broken = { version: LATEST_VERSION + 1, name: 'broken', up: async () => { throw new Error('no'); } };
    await expect(migrate(e, [...MIGRATIONS, broken])).rejects.toThrow('no');
    expect(await schemaVersion(e)).toBe(0);
  });
});
