import { afterEach, describe, expect, it } from 'vitest';
import { generateKey, hashKey, keyIdOf } from '../../src/keys/key.js';
import { bearer, evaluationBody, startTestApp, type TestApp } from '../support/app.js';
import { createUser, login } from '../support/admin.js';

/**
 * The development key (`.dev-api-key`, made by server.ts on a development start with no API_KEYS)
 * has its own entry in the key list, told apart from API_KEYS: id, prefix and file, never the key.
 * The options are the ones server.ts passes to buildApp.
 */
describe('the development key in the admin API', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.app.close();
    t = undefined;
  });

  async function keysOf(app: TestApp, account = 'default') {
    await createUser(app.app.store, 'owner@example.com', { owner: true });
    const owner = await login(app.app, 'owner@example.com');
    const list = await app.app.inject({ method: 'GET', url: `/admin/v1/accounts/${account}/keys`, headers: owner.read });
    expect(list.statusCode).toBe(200);
    return list;
  }

  it('lists the key a fresh development start made as the development key', async () => {
    const made = generateKey();
    t = await startTestApp({ API_KEYS: '' }, {}, { developmentKey: () => made, developmentKeyFile: { file: '.dev-api-key', key: null } });
    expect((await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(made), payload: evaluationBody() })).statusCode).toBe(200);
    const list = await keysOf(t);
    expect(list.json()).toEqual({
      keys: [], env_keys: 1, max_keys: 2,
      development_key: { id: keyIdOf(hashKey(made)), prefix: made.slice(0, 9), file: '.dev-api-key' },
    });
    expect(list.body).not.toContain(made);
  });

  it('lists the key read back from .dev-api-key at a later start', async () => {
    const kept = generateKey();
    t = await startTestApp({ API_KEYS: kept }, {}, { developmentKeyFile: { file: '.dev-api-key', key: kept } });
    const list = (await keysOf(t)).json() as { env_keys: number; development_key: { id: string } | null };
    expect(list).toMatchObject({ env_keys: 1, development_key: { id: keyIdOf(hashKey(kept)), file: '.dev-api-key' } });
  });

  it('is null where the keys come from API_KEYS, and on every other account', async () => {
    t = await startTestApp();
    expect((await keysOf(t)).json()).toMatchObject({ env_keys: 2, development_key: null });
    const other = generateKey();
    await t.app.close();
    t = await startTestApp({ API_KEYS: other }, {}, { developmentKeyFile: { file: '.dev-api-key', key: other } });
    await t.app.store.accounts.create('acme', 'Acme', { files: [], comment: '' }, 'test');
    expect((await keysOf(t, 'acme')).json()).toMatchObject({ env_keys: 0, development_key: null });
  });
});
