import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { hashPassword } from '../../src/admin/password.js';
import type { Store } from '../../src/store/index.js';
import type { AccountRole } from '../../src/store/schema.js';
import type { UserInfo } from '../../src/store/users.js';
import type { ProblemCode } from '../../src/http/problem.js';
import { expectProblem } from './contract.js';

/** Helpers for tests of /admin/v1 through HTTP: users made in the store, then logged in through the API. */

export const PASSWORD = 'a long test password 1';

/** A console user straight into the store (a one-time password only when asked). */
export async function createUser(store: Store, email: string, options: { owner?: boolean; roles?: Record<string, AccountRole>; password?: string; changeRequired?: boolean } = {}): Promise<UserInfo> {
  const user = await store.users.create({ email, passwordHash: await hashPassword(options.password ?? PASSWORD), owner: options.owner ?? false, passwordChangeRequired: options.changeRequired ?? false }, 'test');
  for (const [account, role] of Object.entries(options.roles ?? {})) await store.users.setMembership(account, user.id, role, 'test');
  return user;
}

/** What a logged-in browser sends: the session cookie, and (for writes) the CSRF token. */
export interface Session {
  cookie: string;
  csrf: string;
  /** Headers for a read. */
  read: Record<string, string>;
  /** Headers for a write: the cookie and X-CSRF-Token. */
  write: Record<string, string>;
}

export function sessionFrom(response: LightMyRequestResponse): Session {
  expect(response.statusCode, response.body).toBeLessThan(300);
  const setCookie = String(response.headers['set-cookie']);
  const cookie = /^risk_session=([^;]+)/.exec(setCookie)![0];
  const csrf = (response.json() as { csrf_token: string }).csrf_token;
  return { cookie, csrf, read: { cookie }, write: { cookie, 'x-csrf-token': csrf } };
}

export async function login(app: FastifyInstance, email: string, password = PASSWORD, extra: Partial<InjectOptions> = {}): Promise<Session> {
  return sessionFrom(await app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email, password }, ...extra }));
}

export const bearerToken = (token: string) => ({ authorization: `Bearer ${token}` });

/** An admin API problem: well-formed, with the status and code expected (`errors` may name any field). */
export const expectAdminProblem = (response: LightMyRequestResponse, status: number, code: ProblemCode) => expectProblem(response, status, code, { fields: 'any' });

/** A rule file that did not validate: a 400 whose errors name the file, the path in it and, for YAML, the line and column. */
export const expectRuleFileProblem = (response: LightMyRequestResponse) => {
  const body = expectProblem(response, 400, 'invalid_request', { fields: 'any', ruleFile: true });
  for (const error of body.errors!) expect(error).toHaveProperty('file');
  return body.errors as Array<{ path: string; message: string; file: string; line?: number; column?: number }>;
};

/** A problem's body without the parts that differ per request, to compare two answers. */
export const problemShape = (response: LightMyRequestResponse) => {
  const { instance: _instance, ...rest } = response.json() as Record<string, unknown>;
  return { status: response.statusCode, ...rest };
};
