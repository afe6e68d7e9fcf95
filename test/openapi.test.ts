import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { version } from '../src/app.js';
import { buildOpenApiDocument } from '../src/openapi.js';
import { startTestApp, type TestApp } from './support/app.js';

const document = buildOpenApiDocument(version);
type Operation = { security?: unknown[]; parameters?: unknown[]; responses: Record<string, { headers?: Record<string, unknown> }> };
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods as unknown as Record<string, Operation>).map(([method, op]) => ({ path, method, op })),
);

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

describe('the committed OpenAPI document', () => {
  it('is what the schemas generate (run `npm run openapi` after changing them)', () => {
    const committed = JSON.parse(readFileSync('docs/openapi.json', 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(document)));
  });

  it('names its servers, and every operation says who may call it', () => {
    expect(document.servers.length).toBeGreaterThan(0);
    // The SDK's files are public, whatever their version's path.
    const sdk = operations.filter(({ path }) => path.startsWith('/sdk/'));
    expect(sdk.length).toBeGreaterThan(0);
    for (const { op } of sdk) expect(op.security).toEqual([]);
    // The admin API: a session or an admin token, but for logging in (password or single sign-on) and the first owner's setup.
    const admin = operations.filter(({ path }) => path.startsWith('/admin/'));
    expect(admin.length).toBeGreaterThan(0);
    for (const { path, method, op } of admin) {
      const isPublic = ['post /admin/v1/session', 'post /admin/v1/setup', 'get /admin/v1/sign-in', 'get /admin/v1/oidc/login', 'get /admin/v1/oidc/callback'].includes(`${method} ${path}`);
      expect(op.security, `${method} ${path}`).toEqual(isPublic ? [] : [{ adminSession: [] }, { adminToken: [] }]);
    }
    const security = Object.fromEntries(operations.filter(({ path }) => !path.startsWith('/sdk/') && !path.startsWith('/admin/')).map(({ path, method, op }) => [`${method} ${path}`, op.security]));
    expect(security).toEqual({
      'post /v1/risk/evaluate': [{ bearer: [] }],
      'get /v1/risk/evaluations/{id}': [{ bearer: [] }],
      'post /v1/risk/evaluations/{id}/feedback': [{ bearer: [] }],
      'post /v1/risk/erase': [{ bearer: [] }],
      'get /healthz': [],
      'get /readyz': [],
      'get /openapi.json': [],
    });
  });

  it('every operation takes X-Request-Id and every response returns it', () => {
    for (const { path, op } of operations) {
      // First; an operation adds its path (and, under /admin, query) parameters after it.
      expect(op.parameters![0], path).toEqual({ $ref: '#/components/parameters/RequestId' });
      if (!path.startsWith('/admin/')) for (const p of op.parameters!.slice(1) as Array<{ in: string }>) expect(p.in, path).toBe('path');
      for (const [status, response] of Object.entries(op.responses)) expect(response.headers, `${path} ${status}`).toHaveProperty('X-Request-Id');
    }
  });

  it('describes what the app answers: a problem, and the readiness probe', async () => {
    t = await startTestApp();
    const ajv = new Ajv2020({ strict: false });
    const validate = (schema: object, value: unknown) => {
      const ok = ajv.validate({ ...schema, components: document.components }, value);
      return ok ? null : ajv.errors;
    };
    const problem = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', payload: {} });
    expect(validate({ $ref: '#/components/schemas/Problem' }, problem.json())).toBeNull();
    const ready = (await t.app.inject('/readyz')).json() as object;
    const readySchema = document.paths['/readyz'].get.responses[200].content['application/json']!.schema;
    expect(validate(readySchema, ready)).toBeNull();
    // A body with anything more than the status is not the documented readiness.
    expect(validate(readySchema, { ...ready, sources: [] })).not.toBeNull();
  });
});
