import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { version } from '../../src/app.js';
import { ADMIN_ROUTES } from '../../src/admin/index.js';
import { buildOpenApiDocument } from '../../src/openapi.js';

/** The admin API documents itself from its route declarations: every route, with examples that its own schemas accept. */
const document = buildOpenApiDocument(version);
const ajv = new Ajv2020({ strict: false });
/** A schema of the document with the components its `$ref`s name, so it validates on its own. */
const standalone = (schema: object) => ({ ...schema, components: document.components });

describe('the admin API in the OpenAPI document', () => {
  it.each(ADMIN_ROUTES.map((r) => [`${r.method} ${r.url}`, r] as const))('%s is documented, tagged, with examples its schemas accept', (_name, route) => {
    const path = `/admin/v1${route.url.replace(/:(\w+)/g, '{$1}')}`;
    const operation = (document.paths as unknown as Record<string, Record<string, { tags: string[]; operationId: string; 'x-access': unknown; requestBody?: { content: Record<string, { schema: object; example: unknown }> }; responses: Record<string, { content?: Record<string, { schema: object; example: unknown }> }> }>>)[path]![route.method.toLowerCase()]!;
    expect(operation.operationId).toBe(route.operationId);
    expect(operation.tags[0]).toMatch(/^Admin: /);
    expect(operation['x-access']).toEqual(route.access);
    if (route.body) {
      expect(route.example, 'a request example').toBeDefined();
      expect(route.body.safeParse(route.example).success).toBe(true);
      const media = operation.requestBody!.content['application/json']!;
      expect(ajv.validate(standalone(media.schema), media.example), JSON.stringify(ajv.errors)).toBe(true);
    }
    if (route.success.status === 303) {
      // A browser's navigation: the handler's string is the Location, there is no body.
      expect(operation.responses[303]).toMatchObject({ headers: { Location: { schema: { type: 'string' } } } });
    } else if (route.success.schema) {
      expect(route.success.example, 'a response example').toBeDefined();
      expect(route.success.schema.safeParse(route.success.example).success).toBe(true);
      const media = operation.responses[route.success.status]!.content!['application/json']!;
      expect(ajv.validate(standalone(media.schema), media.example), JSON.stringify(ajv.errors)).toBe(true);
    }
    if ('account' in route.access) expect(operation.responses).toHaveProperty('404');
    if (route.access.role !== 'public') expect(operation.responses).toHaveProperty('401');
  });

  it('keeps every named schema in components, where tools resolve references', () => {
    const text = JSON.stringify(document);
    expect(text).not.toContain('"$defs"');
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) expect(document.components.schemas).toHaveProperty(name!);
  });

  it('gives every operation a unique id', () => {
    const ids = ADMIN_ROUTES.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
