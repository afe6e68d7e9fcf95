import type { FieldError } from '../request/evaluation-request.js';

/**
 * Every error the API returns is an RFC 9457 problem (`application/problem+json`) with a stable
 * `code`. The codes are the contract; titles and details may be reworded.
 */
export const problemCodes = {
  invalid_request: { status: 400, title: 'The request body is invalid' },
  invalid_json: { status: 400, title: 'The request body is not valid JSON' },
  malformed_request: { status: 400, title: 'The request is not valid HTTP' },
  unauthorized: { status: 401, title: 'A valid API key is required' },
  unauthenticated: { status: 401, title: 'Log in, or send an admin token' },
  second_factor_required: { status: 401, title: 'A code from the authenticator app is required' },
  forbidden: { status: 403, title: 'Not allowed for this user or token' },
  csrf_failed: { status: 403, title: 'The CSRF token is missing or wrong' },
  password_change_required: { status: 403, title: 'Choose a new password first' },
  two_factor_setup_required: { status: 403, title: 'Set up two-factor first' },
  password_login_disabled: { status: 403, title: 'Passwords are turned off: sign in through single sign-on' },
  not_found: { status: 404, title: 'No such route' },
  evaluation_not_found: { status: 404, title: 'No such evaluation' },
  resource_not_found: { status: 404, title: 'No such resource' },
  conflict: { status: 409, title: 'The change conflicts with the current state' },
  method_not_allowed: { status: 405, title: 'Method not allowed on this route' },
  request_timeout: { status: 408, title: 'The request took too long to arrive' },
  expectation_failed: { status: 417, title: 'The Expect header cannot be met' },
  payload_too_large: { status: 413, title: 'The request body is too large' },
  unsupported_media_type: { status: 415, title: 'The request body must be application/json' },
  rate_limited: { status: 429, title: 'Too many requests for this account' },
  too_many_attempts: { status: 429, title: 'Too many attempts; wait before trying again' },
  headers_too_large: { status: 431, title: 'The request headers are too large' },
  internal_error: { status: 500, title: 'The service failed to answer' },
  not_ready: { status: 503, title: 'The service is not ready' },
  store_unavailable: { status: 503, title: 'The store is unavailable' },
} as const;

export type ProblemCode = keyof typeof problemCodes;

/** `invalid_request`'s title when a query parameter is at fault (problems.invalidQuery). */
export const INVALID_QUERY_TITLE = 'The query string is invalid';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** This occurrence: `urn:risk-evaluation:request:<X-Request-Id>` (see request-id.ts). */
  instance: string;
  code: ProblemCode;
  errors?: FieldError[];
}

export class Problem extends Error {
  readonly status: number;

  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers: Record<string, string> = {},
    /** Instead of the code's title, where the code covers more than one kind of input. */
    readonly title: string = problemCodes[code].title,
  ) {
    // A problem is an expected answer, not a bug: its stack is never shown or logged, so it is not
    // captured (capturing one costs more than the rest of a 400).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = limit;
    this.name = 'Problem';
    this.status = problemCodes[code].status;
  }

  toBody(instance: string): ProblemBody {
    return {
      type: `urn:risk-evaluation:problem:${this.code}`,
      title: this.title,
      status: this.status,
      detail: this.detail,
      instance,
      code: this.code,
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

export const problems = {
  invalidRequest: (errors: FieldError[]) =>
    new Problem('invalid_request', `Invalid field${errors.length > 1 ? 's' : ''}: ${[...new Set(errors.map((e) => e.path))].join(', ')}`, errors),
  /**
   * A query parameter that is missing or invalid: the same code as a body's, since clients handle
   * both alike, but not titled as if the body were at fault.
   */
  invalidQuery: (errors: FieldError[]) =>
    new Problem('invalid_request', `Invalid query parameter${errors.length > 1 ? 's' : ''}: ${[...new Set(errors.map((e) => e.path))].join(', ')}`, errors, {}, INVALID_QUERY_TITLE),
  invalidJson: (detail: string) => new Problem('invalid_json', detail, [{ path: '(body)', message: detail }]),
  unauthorized: (detail: string) => new Problem('unauthorized', detail, undefined, { 'www-authenticate': 'Bearer realm="risk-evaluation"' }),
  notFound: (method: string, url: string) => new Problem('not_found', `${method} ${url} is not a route of this service`),
  methodNotAllowed: (method: string, allow: string[]) =>
    new Problem('method_not_allowed', `${method} is not allowed here; use ${allow.join(', ')}`, undefined, { allow: allow.join(', ') }),
  payloadTooLarge: (limit: number) => new Problem('payload_too_large', `The body must be at most ${limit} bytes`),
  unsupportedMediaType: (contentType: string | undefined) =>
    new Problem('unsupported_media_type', `Content-Type ${contentType ? `"${contentType}"` : '(none)'} is not supported; send application/json`),
  rateLimited: (retryAfterSeconds: number) =>
    new Problem('rate_limited', `Rate limit exceeded; retry in ${retryAfterSeconds} s`, undefined, { 'retry-after': String(retryAfterSeconds) }),
  malformedRequest: (detail: string) => new Problem('malformed_request', detail),
  /** `/admin/v1`: no session and no admin token, or one that is not (or no longer) valid. */
  unauthenticated: (detail: string) => new Problem('unauthenticated', detail, undefined, { 'www-authenticate': 'Bearer realm="risk-evaluation-admin"' }),
  /** The password was right and the user has two-factor on: send it again with `totp_code` or `recovery_code`. */
  secondFactorRequired: () => new Problem('second_factor_required', 'Send the password again with totp_code (the authenticator app\'s code) or a recovery_code', [{ path: 'totp_code', message: 'required for this user' }]),
  forbidden: (detail: string) => new Problem('forbidden', detail),
  passwordLoginDisabled: (provider: string) => new Problem('password_login_disabled', `This instance accepts no passwords (PASSWORD_LOGIN=false): sign in with ${provider} (GET /admin/v1/oidc/login)`),
  twoFactorSetupRequired: () => new Problem('two_factor_setup_required', 'This instance requires two-factor: POST /admin/v1/session/totp, then confirm it with PUT /admin/v1/session/totp'),
  csrfFailed: () => new Problem('csrf_failed', 'A write with the session cookie must send the session\'s X-CSRF-Token header (GET /admin/v1/session returns it)'),
  passwordChangeRequired: () => new Problem('password_change_required', 'This password was issued to be changed: PUT /admin/v1/session/password first'),
  /** The same answer for what does not exist and what the caller may not know exists. */
  resourceNotFound: (detail: string) => new Problem('resource_not_found', detail),
  conflict: (detail: string) => new Problem('conflict', detail),
  /**
   * A rule file that does not validate: each problem with the path inside the file (`rules[2].score`,
   * as `rules:check` prints it) and, for YAML text, its line and column.
   */
  invalidRuleFile: (problems: ReadonlyArray<{ file: string; path: string; message: string; line: number | null; column: number | null }>) =>
    new Problem('invalid_request', `The rule set is not valid: ${problems.length} problem${problems.length > 1 ? 's' : ''}`,
      problems.map((p) => ({ path: p.path === '' ? '(file)' : p.path, message: p.message, file: p.file, ...(p.line !== null ? { line: p.line, column: p.column } : {}) }))),
  tooManyAttempts: (retryAfterSeconds: number, detail: string) =>
    new Problem('too_many_attempts', `${detail}; retry in ${retryAfterSeconds} s`, undefined, { 'retry-after': String(retryAfterSeconds) }),
  requestTimeout: () => new Problem('request_timeout', 'The request was not received in time'),
  expectationFailed: (expectation: string | undefined) =>
    new Problem('expectation_failed', `Expect "${expectation ?? ''}" is not supported; only "100-continue" is`),
  headersTooLarge: () => new Problem('headers_too_large', 'The request headers exceed the size the server accepts'),
  internal: () => new Problem('internal_error', 'An unexpected error occurred; it has been logged'),
  notReady: (detail: string) => new Problem('not_ready', detail),
  evaluationNotFound: (id: string) => new Problem('evaluation_not_found', `This account has no evaluation ${id} in its log (kept RETENTION_DAYS)`),
  /** A call that needs the store (the admin API, feedback, erasure) while it cannot be reached. */
  storeUnavailable: () =>
    new Problem('store_unavailable', 'The store cannot be reached; retry shortly (evaluations keep answering meanwhile)', undefined, { 'retry-after': '5' }),
};
