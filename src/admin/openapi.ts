import { z } from 'zod';
import type { Access } from './access.js';
import { ADMIN_PREFIX, ADMIN_TAGS, type AdminRoute } from './route.js';
import { SESSION_COOKIE } from './session.js';

/**
 * The admin API's part of the OpenAPI document, generated from the route declarations themselves
 * (schemas, examples, access), so it cannot drift from the code. `x-access` repeats each route's
 * declared access for machines (the console hides what the caller may not do).
 */
export interface OpenApiParts {
  operation<T extends object>(security: Array<Record<string, string[]>>, rest: T): object;
  problem(description: string, headers?: Record<string, unknown>): object;
  ok(description: string, content: Record<string, { schema: object; example?: unknown }>, headers?: Record<string, unknown>): object;
  jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown>;
}

export const ADMIN_SECURITY: Array<Record<string, string[]>> = [{ adminSession: [] }, { adminToken: [] }];

export const adminSecuritySchemes = {
  adminSession: {
    type: 'apiKey', in: 'cookie', name: SESSION_COOKIE,
    description: `The console session, set by \`POST ${ADMIN_PREFIX}/session\`. Every write made with it must also send \`X-CSRF-Token\`.`,
  },
  adminToken: { type: 'http', scheme: 'bearer', description: 'An admin token (`rat_…`), made with `POST /admin/v1/tokens`. An API key is refused.' },
};

/** The tags the routes use, in ADMIN_TAGS' order. */
export const adminTags = (routes: readonly AdminRoute[]) =>
  (Object.keys(ADMIN_TAGS) as Array<keyof typeof ADMIN_TAGS>).filter((tag) => routes.some((r) => r.tag === tag)).map((tag) => ({ name: ADMIN_TAGS[tag] }));

function who(access: Access): string {
  switch (access.role) {
    case 'public':
      return 'No credentials needed.';
    case 'signed-in':
      return 'Any console user or admin token.';
    case 'owner':
      return 'Instance owners (users marked owner, `owner` tokens).';
    default:
      return access.role === 'admin'
        ? 'The `admin` role in the account (instance owners too). Anyone else who is not a member gets 404, as for an account that does not exist.'
        : 'The `analyst` or `admin` role in the account (instance owners too). A caller who is not a member gets 404, as for an account that does not exist.';
  }
}

function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query', parts: OpenApiParts) {
  if (schema === undefined) return [];
  const json = parts.jsonSchema(schema, 'input') as { properties?: Record<string, object>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name, in: where, required: where === 'path' || (json.required ?? []).includes(name), schema: property,
  }));
}

/**
 * Named schemas a route's schema refers to (a rule file's recursive condition: zod writes them as
 * `$defs`) are moved to `components.schemas`, where every OpenAPI tool resolves `$ref`s: `#/$defs/x`
 * inside an operation would be read against the document's root.
 */
function hoistDefinitions(schema: Record<string, unknown>, into: Record<string, unknown>): Record<string, unknown> {
  const { $defs, ...rest } = schema as { $defs?: Record<string, unknown> };
  const text = (value: unknown) => JSON.stringify(value).replace(/"#\/\$defs\/([^"]+)"/g, '"#/components/schemas/$1"');
  for (const [name, definition] of Object.entries($defs ?? {})) {
    const rewritten = JSON.parse(text(definition)) as unknown;
    if (name in into && JSON.stringify(into[name]) !== JSON.stringify(rewritten)) throw new Error(`two different schemas are named ${name}`);
    into[name] = rewritten;
  }
  return JSON.parse(text(rest)) as Record<string, unknown>;
}

/** The admin API's operations, and the named schemas they refer to (for `components.schemas`). */
export function adminPaths(routes: readonly AdminRoute[], given: OpenApiParts): { paths: Record<string, Record<string, object>>; schemas: Record<string, unknown> } {
  const schemas: Record<string, unknown> = {};
  const parts: OpenApiParts = { ...given, jsonSchema: (schema, io) => hoistDefinitions(given.jsonSchema(schema, io), schemas) };
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    const path = ADMIN_PREFIX + route.url.replace(/:(\w+)/g, '{$1}');
    const isPublic = route.access.role === 'public';
    const write = route.method !== 'GET';
    const responses: Record<string, object> = {};
    const { success } = route;
    responses[success.status] = success.status === 303
      ? { description: success.description, headers: { ...(parts.ok('', {}) as { headers: object }).headers, Location: { schema: { type: 'string' } } } }
      : success.mediaType
      ? parts.ok(success.description, { [success.mediaType]: { schema: { type: 'string' } } })
      : success.schema
      ? parts.ok(success.description, { 'application/json': { schema: parts.jsonSchema(success.schema, 'output'), ...(success.example !== undefined ? { example: success.example } : {}) } })
      : { description: success.description, headers: (parts.ok('', {}) as { headers: object }).headers };
    if (route.body || route.query) responses[400] = parts.problem('A field is missing or invalid (`errors` names each one)');
    if (!isPublic) {
      responses[401] = parts.problem('No session or admin token, or one that is no longer valid (ended, expired, revoked, disabled user)', { 'WWW-Authenticate': { schema: { type: 'string' } } });
      responses[403] = parts.problem(
        [write ? 'a write with the session cookie without its `X-CSRF-Token`' : null, route.access.role === 'signed-in' ? null : 'a caller without the role', route.accessOptions?.duringPasswordChange ? null : 'a user who must change their one-time password first', route.accessOptions?.sessionOnly ? 'an admin token (only a console session may do this)' : null]
          .filter(Boolean).join('; ') || 'not allowed',
      );
    }
    if ('account' in route.access || route.params) responses[404] = parts.problem('No such resource, or one in an account the caller is not a member of (the same answer)');
    for (const [status, description] of Object.entries(route.problems ?? {})) {
      responses[status] = parts.problem(description, status === '429' ? { 'Retry-After': { schema: { type: 'integer' } } } : {});
    }
    responses[500] = parts.problem('An unexpected error; no internals are shown');
    responses[503] = parts.problem('The store cannot be reached (`store_unavailable`); retry after `Retry-After` seconds', { 'Retry-After': { schema: { type: 'integer' } } });

    const csrf = write && !isPublic
      ? [{ name: 'X-CSRF-Token', in: 'header', required: false, description: `With the session cookie: the session's CSRF token (\`csrf_token\` of \`GET ${ADMIN_PREFIX}/session\`). Not needed with an admin token.`, schema: { type: 'string' } }]
      : [];
    const operation = parts.operation(isPublic ? [] : ADMIN_SECURITY, {
      operationId: route.operationId,
      summary: route.summary,
      description: [route.description, `**Who:** ${who(route.access)}`].filter(Boolean).join('\n\n'),
      tags: [ADMIN_TAGS[route.tag]],
      'x-access': route.access,
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: parts.jsonSchema(route.body, 'input'), ...(route.example !== undefined ? { example: route.example } : {}) } } } }
        : {}),
      responses,
    }) as { parameters: unknown[] };
    operation.parameters = [...operation.parameters, ...parametersOf(route.params, 'path', parts), ...parametersOf(route.query, 'query', parts), ...csrf];
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return { paths, schemas };
}

