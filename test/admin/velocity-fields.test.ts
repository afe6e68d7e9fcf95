import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { createUser, login, type Session } from '../support/admin.js';
import { freshDatabaseUrl } from '../support/store.js';

/**
 * What the console's custom-rule editor needs for velocity counters (issue 28): the field catalogue
 * of an event type lists the counters its draft defines as `velocity.<name>`, and a rule reading one
 * is accepted into the draft, while one reading a counter the draft does not define is refused at
 * its field.
 */
describe('velocity counters in the rule editor', () => {
  let t: TestApp;
  let admin: Session;
  const base = '/admin/v1/accounts/alpha';
  const register = `${base}/rule-sets/account_register`;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl('sqlite') });
    await createUser(t.app.store, 'owner@example.com', { owner: true });
    const owner = await login(t.app, 'owner@example.com');
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: owner.write, payload: { id: 'alpha' } })).statusCode).toBe(201);
    await createUser(t.app.store, 'admin.a@example.com', { roles: { alpha: 'admin' } });
    admin = await login(t.app, 'admin.a@example.com');
  });
  afterAll(async () => {
    await t.app.close();
  });

  const fields = async (query = '') => ((await t.app.inject({ method: 'GET', url: `${base}/rules/fields${query}`, headers: admin.read })).json().fields as Array<{ path: string; type: string; operators: string[]; description: string }>);

  it('lists the draft\'s counters as number fields, and takes a rule that reads one', async () => {
    const yaml = 'velocity:\n  - name: signups_per_domain_1h\n    key: email.domain\n    window: 1h\nrules:\n  - library: ip_tor\n';
    const saved = await t.app.inject({ method: 'PUT', url: `${register}/draft`, headers: admin.write, payload: { yaml } });
    expect(saved.statusCode, saved.body).toBe(200);

    expect((await fields()).some((f) => f.path.startsWith('velocity.'))).toBe(false);
    const counter = (await fields('?event_type=account_register')).find((f) => f.path === 'velocity.signups_per_domain_1h');
    expect(counter).toMatchObject({ type: 'number', value_type: 'number', check: null });
    expect(counter!.operators).toEqual(expect.arrayContaining(['gte', 'lt', 'equals']));
    expect(counter!.description).toContain('email.domain');

    const rule = { id: 'domain_burst', name: 'Many sign-ups from one domain', score: 25, when: { field: 'velocity.signups_per_domain_1h', gte: 20 } };
    const added = await t.app.inject({ method: 'POST', url: `${register}/draft/rules`, headers: admin.write, payload: { rule } });
    expect(added.statusCode, added.body).toBe(201);

    const wrong = await t.app.inject({ method: 'POST', url: `${register}/draft/rules`, headers: admin.write, payload: { rule: { ...rule, id: 'other', when: { field: 'velocity.signups_1h', gte: 20 } } } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().errors).toEqual(expect.arrayContaining([expect.objectContaining({ message: expect.stringContaining('no velocity counter "signups_1h"') })]));
  });
});
