import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Config } from '../config/config.js';
import type { Enricher } from '../evaluation/evaluate.js';
import type { SourceStatus } from '../core/ports.js';
import type { FieldError } from '../request/evaluation-request.js';
import { problems } from '../http/problem.js';
import { ACCOUNT_ID } from '../keys/account-id.js';
import type { DevelopmentKeyInfo } from '../keys/key.js';
import type { Store } from '../store/index.js';
import type { RuleSeed } from '../store/rule-sets.js';
import type { AccountRow } from '../store/schema.js';
import { ANONYMOUS, authorize, noSuchAccount, type Access, type AccessOptions, type Principal } from './access.js';
import { authenticate, type SessionPolicy } from './authenticate.js';
import type { BacktestJobs } from '../backtest/jobs.js';
import type { WebhookWorker } from '../webhooks/worker.js';
import type { SingleSignOn } from './oidc.js';

/**
 * How an `/admin/v1` route is declared: one object says what it is (method, URL, OpenAPI summary
 * and tag), who may call it (`access`), what it takes (zod schemas for path parameters, query and
 * body, with an example) and what it answers (status, schema, example). `registerAdminRoutes`
 * turns it into a Fastify route whose `onRequest` hook authenticates and authorizes the caller
 * before the body is read; the OpenAPI document is generated from the same objects
 * (src/admin/openapi.ts). A handler receives validated input and the caller, and returns the body.
 *
 * ```ts
 * export const renameAccount = adminRoute({
 *   method: 'PATCH', url: '/accounts/:account', tag: 'accounts', operationId: 'updateAccount',
 *   summary: 'Rename, disable or re-enable an account',
 *   access: { role: 'owner' },
 *   params: accountParams, body: accountChange, example: { name: 'Acme Ltd' },
 *   success: { status: 200, description: 'The account as it is now', schema: account, example: … },
 *   handler: async ({ params, body, principal, services }) => …,
 * });
 * ```
 *
 * Conventions: a route on one account's data names it `:account` and declares `account: true`;
 * the hook then checks the caller's role in it and that it exists (`ctx.account`), answering the
 * same 404 for both. Errors are thrown as `Problem`s or `StoreRequestError`s (mapped to 404, 409,
 * 400 by the error handler).
 */
export interface AdminServices {
  store: Store;
  config: Config;
  /** The rule sets a new account starts with (RULES_DIR). */
  seed: RuleSeed;
  /** Every key, rule and data source, as the start-up log reports them. */
  sources(): SourceStatus[];
  sessions: SessionPolicy;
  now(): number;
  /** Reads the store's changes now (after a change this replica should serve at once). */
  reloadConfiguration(): Promise<void>;
  /** The evaluation's enrichment, recording nothing (a rule set's dry run). */
  enrich: Enricher;
  /** Backtests this replica runs, and those in the store (src/backtest/jobs.ts). */
  backtests: BacktestJobs;
  /** The development key this process serves for the `default` account (a development start with no API_KEYS), else null. */
  developmentKey?: DevelopmentKeyInfo | null;
  /** This replica's webhook worker: a test delivery is sent at once (src/webhooks/worker.ts). */
  webhooks: WebhookWorker;
  /** Single sign-on through the OpenID Connect provider, when OIDC_ISSUER is set (src/admin/oidc.ts). */
  singleSignOn?: SingleSignOn;
}

export interface AdminContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  /** The account `:account` names, known to exist and to be visible to the caller. Only on `account: true` routes. */
  account: AccountRow;
  request: FastifyRequest;
  reply: FastifyReply;
  services: AdminServices;
  /** The request's time, from the app's clock (tests inject one). */
  now: number;
}

/** The OpenAPI tags of the admin API, each with its description. */
export const ADMIN_TAGS = {
  session: 'Admin: log in and out, who am I, the first owner',
  accounts: 'Admin: accounts',
  keys: 'Admin: API keys of an account',
  users: 'Admin: console users and their roles',
  tokens: 'Admin: admin tokens for automation',
  audit: 'Admin: the audit log',
  health: 'Admin: data sources and health',
  rules: 'Admin: rule sets',
  decisions: 'Admin: decisions (the evaluation log)',
  lists: 'Admin: lists and labels',
  reviews: 'Admin: the review queue',
  webhooks: 'Admin: webhook endpoints',
} as const;
export type AdminTag = keyof typeof ADMIN_TAGS;

type Schema = z.ZodType | undefined;
type Out<S extends Schema, Otherwise> = S extends z.ZodType ? z.output<S> : Otherwise;

export interface AdminRouteDefinition<P extends Schema, Q extends Schema, B extends Schema, R extends Schema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Under /admin/v1, with `:name` parameters. */
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: AdminTag;
  access: Access;
  accessOptions?: AccessOptions;
  params?: P;
  query?: Q;
  body?: B;
  /** A request body that works (checked against `body` by test/admin/openapi.test.ts). */
  example?: B extends z.ZodType ? z.input<B> : never;
  /** 303: a browser's navigation (single sign-on); the handler resolves with the Location. */
  success: {
    status: 200 | 201 | 202 | 204 | 303; description: string; schema?: R; example?: R extends z.ZodType ? z.output<R> : never;
    /** A body that is not JSON (a CSV export): its media type; the handler sets the header and returns the body (a stream). */
    mediaType?: string;
  };
  /** Problems this route answers beyond those its declaration implies (status: when). */
  problems?: Record<number, string>;
  handler(ctx: AdminContext<Out<P, Record<string, never>>, Out<Q, Record<string, never>>, Out<B, undefined>>): Promise<Out<R, void>>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list holds routes of every shape
export type AdminRoute = AdminRouteDefinition<any, any, any, any>;

/** Declares a route, with its handler's types inferred from its schemas. */
export const adminRoute = <P extends Schema = undefined, Q extends Schema = undefined, B extends Schema = undefined, R extends Schema = undefined>(
  route: AdminRouteDefinition<P, Q, B, R>,
): AdminRoute => route;

export const ADMIN_PREFIX = '/admin/v1';

/**
 * The largest admin API body: an import of a directory of rule files travels as JSON strings. Each
 * file is at most 32 KiB and an import at most 50 files, but the body as a whole at most this (413
 * beyond): a few hundred typical files of 1 to 2 KiB, or some thirty of the largest.
 */
export const ADMIN_BODY_LIMIT_BYTES = 1024 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the admin API's onRequest hook: who is calling, and the account the route names. */
    admin?: { principal: Principal; account: AccountRow | undefined; now: number };
  }
}

/** zod issues as the problem's `errors`: one per field, dotted paths, `(body)` for the body itself. */
function fieldErrors(issues: readonly z.core.$ZodIssue[], root: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const issue of issues) {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : root;
    if (!errors.some((e) => e.path === path)) errors.push({ path, message: issue.message });
  }
  return errors;
}

async function gate(route: AdminRoute, request: FastifyRequest, reply: FastifyReply, services: AdminServices): Promise<void> {
  const now = services.now();
  const authentication = await authenticate(request, reply, services.store, services.sessions, now);
  // A public route (log in) is never refused for a stale cookie or token: it is served as anonymous.
  if ('problem' in authentication && route.access.role !== 'public') throw authentication.problem;
  const principal = 'principal' in authentication ? authentication.principal : ANONYMOUS;
  const accountId = 'account' in route.access ? (request.params as { account: string }).account : undefined;
  authorize(route.access, route.accessOptions ?? {}, principal, request, accountId);
  let account: AccountRow | undefined;
  if (accountId !== undefined) {
    account = ACCOUNT_ID.test(accountId) ? await services.store.accounts.row(accountId) : undefined;
    if (!account) throw noSuchAccount(accountId);
  }
  request.admin = { principal, account, now };
}

async function handle(route: AdminRoute, request: FastifyRequest, reply: FastifyReply, services: AdminServices): Promise<FastifyReply> {
  const params = route.params ? route.params.safeParse(request.params) : { success: true as const, data: {} };
  if (!params.success) {
    const name = String(params.error.issues[0]?.path[0] ?? 'resource');
    throw problems.resourceNotFound(`no ${name.replace(/_/g, ' ')} "${(request.params as Record<string, string>)[name] ?? ''}"`);
  }
  const query = route.query ? route.query.safeParse(request.query) : { success: true as const, data: {} };
  if (!query.success) throw problems.invalidQuery(fieldErrors(query.error.issues, '(query)'));
  const body = route.body ? route.body.safeParse(request.body ?? {}) : { success: true as const, data: undefined };
  if (!body.success) throw problems.invalidRequest(fieldErrors(body.error.issues, '(body)'));

  const { principal, account, now } = request.admin!;
  const context: AdminContext<unknown, unknown, unknown> = {
    params: params.data, query: query.data, body: body.data, principal,
    get account(): AccountRow {
      if (account === undefined) throw new Error(`${route.operationId} is not declared with account: true`);
      return account;
    },
    request, reply, services, now,
  };
  const result = await route.handler(context as never);
  reply.code(route.success.status);
  if (route.success.status === 303) return reply.header('location', result as string).send();
  return route.success.status === 204 ? reply.send() : reply.send(result);
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Registers the routes in `scope` (mounted at /admin/v1), and a 405 for the other methods of each URL. */
export function registerAdminRoutes(scope: FastifyInstance, routes: readonly AdminRoute[], services: AdminServices): void {
  const byUrl = new Map<string, string[]>();
  for (const route of routes) {
    if ('account' in route.access && !route.url.includes('/:account')) throw new Error(`${route.operationId}: an account route must name :account in its URL`);
    byUrl.set(route.url, [...(byUrl.get(route.url) ?? []), route.method]);
    scope.route({
      method: route.method,
      url: route.url,
      // Rule files travel as JSON strings here: at least ADMIN_BODY_LIMIT_BYTES, whatever BODY_LIMIT_BYTES says for /v1.
      bodyLimit: Math.max(services.config.bodyLimitBytes, ADMIN_BODY_LIMIT_BYTES),
      onRequest: (request, reply) => gate(route, request, reply, services),
      handler: (request, reply) => handle(route, request, reply, services),
    });
  }
  for (const [url, declared] of byUrl) {
    const allow = declared.includes('GET') ? [...declared, 'HEAD'] : declared;
    scope.route({
      method: [...METHODS.filter((m) => !declared.includes(m)), 'OPTIONS'],
      url,
      handler: async (request) => {
        throw problems.methodNotAllowed(request.method, allow);
      },
    });
  }
}
