import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeFailure } from '../../src/store/errors.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createUser, expectAdminProblem, login } from '../support/admin.js';
import { startPostgres, type PostgresServer } from '../support/postgres.js';
import { ENGINES, openTestStore } from '../support/store.js';

/**
 * The admin API when the store fails: PostgreSQL stopped as a crash stops it answers 503
 * `store_unavailable` with Retry-After (not a 500, not a wrong 401), and works again once it is
 * back; a unique constraint two writers raced for is a 409, on either engine.
 */
let postgres: PostgresServer;
let t: TestApp | undefined;
beforeAll(async () => {
  // Its own server: stopping the run's shared one would fail every other test file.
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await t?.app.close();
  await postgres?.close();
});

describe('the admin API with its store down', () => {
  it('answers 503 store_unavailable while PostgreSQL is down, and serves again once it is back', async () => {
    t = await startTestApp({ DATABASE_URL: await postgres.createDatabase() });
    await createUser(t.app.store, 'owner@example.com', { owner: true });
    const session = await login(t.app, 'owner@example.com');
    // The test server commits asynchronously (synchronous_commit=off) and stops as a crash does:
    // without a checkpoint the session row just written could be lost with it, and the login with it.
    await sql`checkpoint`.execute(t.app.store.engine.db);
    await postgres.stop();
    for (const response of [
      await t.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: session.read }),
      await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'owner@example.com', password: 'whatever it is' } }),
    ]) {
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ code: 'store_unavailable', status: 503 });
      expect(response.headers['retry-after']).toBe('5');
    }
    await postgres.start();
    await expect.poll(async () => (await t!.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: session.read })).statusCode, { timeout: 15_000, interval: 100 }).toBe(200);
    expectAdminProblem(await t.app.inject({ method: 'GET', url: '/admin/v1/accounts' }), 401, 'unauthenticated');
  }, 60_000);
});

describe.each(ENGINES)('a raced unique constraint on %s', (engine) => {
  it('is a conflict, not a bug', async () => {
    const store = await openTestStore(engine, { writeLog: false });
    try {
      const row = { id: 'usr_0000000000000001', email: 'a@example.com', password_hash: 'x', password_change_required: 0, owner: 0, status: 'active' as const, created_at: 1, created_by: 'test', two_factor_required: 0 };
      await store.engine.db.insertInto('users').values(row).execute();
      const error = await store.engine.db.insertInto('users').values({ ...row, id: 'usr_0000000000000002' }).execute().catch((e: unknown) => e);
      expect(storeFailure(error)).toBe('conflict');
      expect(storeFailure(new Error('a bug'))).toBeNull();
    } finally {
      await store.close();
    }
  });
});
