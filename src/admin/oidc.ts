import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import type { Logger } from 'pino';
import type { OidcSettings } from '../config/config.js';

/**
 * OpenID Connect sign-in (README "Single sign-on"): the authorization code flow with PKCE (S256),
 * `state` and `nonce`, through `openid-client`, which checks the ID token's signature (the
 * provider's published keys), issuer, audience, expiry, nonce and the `iss` of the answer (RFC 9207).
 *
 * The flow's secrets (state, nonce, PKCE verifier) travel in a cookie of their own, `risk_oidc`:
 * HttpOnly, `SameSite=Lax` (the provider sends the browser back with a cross-site top-level GET,
 * which a Strict cookie would not follow), `Path=/admin/v1/oidc`, ten minutes. Nothing is kept on the
 * server between the two legs, so any replica can finish a sign-in another one started. The state
 * in the cookie must equal the one the provider sends back, so a callback URL planted in another
 * browser (login CSRF) finds no cookie to match.
 *
 * The provider's metadata is discovered once, on the first sign-in, and discovered again after a
 * failure; its keys are cached by openid-client. The provider's clock is judged by the service's
 * (`now`: tests move it to expire a token without waiting).
 */
export const OIDC_COOKIE = 'risk_oidc';
const COOKIE_PATH = '/admin/v1/oidc';
/** How long the provider's sign-in may take, from the click to the callback. */
export const OIDC_FLOW_MS = 10 * 60_000;
/** The provider's answers: discovery, keys, token. */
const PROVIDER_TIMEOUT_SECONDS = 10;

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  /** When the flow started (ms). */
  at: number;
}

/** Why a sign-in was refused: the code the console shows a message for, and what the log says. */
export type RefusalReason =
  | 'provider_unavailable' // discovery, keys or token endpoint unreachable, or the issuer is not OIDC_ISSUER
  | 'sign_in_expired' // no flow cookie, a state that is not its, or older than OIDC_FLOW_MS
  | 'provider_refused' // the provider answered an error (the user cancelled; a code used twice or expired)
  | 'invalid_token' // the ID token failed a check: issuer, audience, signature, expiry, nonce
  | 'email_missing' // no (verified) e-mail address in the claims
  | 'unknown_user' // nobody with that e-mail address, or a disabled user
;

export class SignInRefused extends Error {
  constructor(readonly reason: RefusalReason, readonly detail: string, readonly subject?: string) {
    super(`${reason}: ${detail}`);
    this.name = 'SignInRefused';
  }
}

/** What the provider says of the person, once every check passed. */
export interface SignedInIdentity {
  subject: string;
  email: string;
}

/** Plain http is allowed only to a provider on this machine (development, tests). */
const isLoopback = (url: URL) => url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);

export class SingleSignOn {
  private server: Promise<client.ServerMetadata> | undefined;

  constructor(readonly settings: OidcSettings, private readonly log: Logger) {}

  get name(): string {
    return this.settings.name;
  }

  /** The provider's metadata, discovered once; a failure is forgotten so the next sign-in tries again. */
  private metadata(): Promise<client.ServerMetadata> {
    this.server ??= client.discovery(this.settings.issuer, this.settings.clientId, undefined, undefined, {
      execute: isLoopback(this.settings.issuer) ? [client.allowInsecureRequests] : [],
      timeout: PROVIDER_TIMEOUT_SECONDS,
    }).then((configuration) => configuration.serverMetadata()).catch((error: unknown) => {
      this.server = undefined;
      throw error;
    });
    return this.server;
  }

  /** The client, with the provider's metadata and the service's clock. */
  private async configuration(now: number): Promise<client.Configuration> {
    let metadata: client.ServerMetadata;
    try {
      metadata = await this.metadata();
    } catch (error) {
      this.log.error({ err: error, issuer: this.settings.issuer.href }, 'single sign-on: the provider\'s metadata could not be read');
      throw new SignInRefused('provider_unavailable', `discovery at ${this.settings.issuer.href} failed: ${explain(error)}`);
    }
    const configuration = new client.Configuration(metadata, this.settings.clientId, {
      [client.clockSkew]: Math.round((now - Date.now()) / 1000),
    }, client.ClientSecretBasic(this.settings.clientSecret));
    configuration.timeout = PROVIDER_TIMEOUT_SECONDS;
    if (isLoopback(this.settings.issuer)) client.allowInsecureRequests(configuration);
    return configuration;
  }

  /** Starts a sign-in: sets the flow cookie, resolves with the provider's URL to send the browser to. */
  async start(request: FastifyRequest, reply: FastifyReply, now: number): Promise<string> {
    const configuration = await this.configuration(now);
    const pending: Pending = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier(), at: now };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.settings.redirectUrl.href,
      scope: this.settings.scopes,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    reply.header('set-cookie', flowCookie(request, Buffer.from(JSON.stringify(pending)).toString('base64url'), OIDC_FLOW_MS / 1000));
    return url.href;
  }

  /**
   * Finishes a sign-in from the provider's answer (the callback's query string): every check of
   * the flow and of the ID token, then the e-mail address it names. Throws `SignInRefused`. The
   * caller clears the flow cookie whatever happens (`clearFlowCookie`): a flow is finished once.
   */
  async finish(request: FastifyRequest, now: number): Promise<SignedInIdentity> {
    const pending = pendingFrom(request);
    const query = new URL(request.url, 'http://callback.invalid').search;
    const answer = new URLSearchParams(query);
    if (pending === undefined || pending.state !== answer.get('state') || now - pending.at > OIDC_FLOW_MS || now < pending.at) {
      throw new SignInRefused('sign_in_expired', pending === undefined ? 'no sign-in under way in this browser' : 'the state is not this browser\'s, or the sign-in is older than ten minutes');
    }
    const configuration = await this.configuration(now);
    // The URL the provider redirected to, as configured: never the Host header's idea of it.
    const currentUrl = new URL(this.settings.redirectUrl.href);
    currentUrl.search = query;
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
        pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true,
      });
    } catch (error) {
      throw refusalOf(error);
    }
    const claims = tokens.claims()!;
    let email = claims[this.settings.emailClaim];
    let verified = claims.email_verified;
    if (email === undefined) {
      // Some providers put the address only in the UserInfo answer.
      try {
        const info = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub);
        email = info[this.settings.emailClaim];
        verified = info.email_verified;
      } catch (error) {
        throw refusalOf(error);
      }
    }
    if (typeof email !== 'string' || email === '') throw new SignInRefused('email_missing', `the provider sent no ${this.settings.emailClaim} claim (is the email scope in OIDC_SCOPES?)`, claims.sub);
    if (verified === false) throw new SignInRefused('email_missing', 'the provider says the e-mail address is not verified', claims.sub);
    return { subject: claims.sub, email };
  }
}

/** openid-client's errors as refusals: the provider said no, a token failed a check, or the provider could not be reached. */
function refusalOf(error: unknown): SignInRefused {
  if (error instanceof client.AuthorizationResponseError || error instanceof client.ResponseBodyError) {
    return new SignInRefused('provider_refused', `the provider answered ${error.error}${error.error_description ? `: ${error.error_description}` : ''}`);
  }
  if (error instanceof client.ClientError && typeof error.code === 'string' && error.code.startsWith('OAUTH_')) {
    const transport = error.code === 'OAUTH_RESPONSE_IS_NOT_JSON' || error.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM';
    return new SignInRefused(transport ? 'provider_unavailable' : 'invalid_token', explain(error));
  }
  return new SignInRefused('provider_unavailable', explain(error));
}

/** The messages down an error's `cause` chain, and the claim or attribute a check was about (openid-client wraps oauth4webapi's). */
function explain(error: unknown): string {
  const parts: string[] = [];
  for (let at: unknown = error, depth = 0; at !== undefined && at !== null && depth < 4; depth++) {
    if (at instanceof Error) {
      if (!parts.includes(at.message)) parts.push(at.message);
      at = at.cause;
    } else {
      const { claim, attribute } = at as { claim?: unknown; attribute?: unknown };
      if (typeof claim === 'string') parts.push(`claim ${claim}`);
      if (typeof attribute === 'string') parts.push(`attribute ${attribute}`);
      break;
    }
  }
  return parts.join(': ');
}

export function clearFlowCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', flowCookie(request, '', 0));
}

function flowCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${OIDC_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`;
}

function pendingFrom(request: FastifyRequest): Pending | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== OIDC_COOKIE) continue;
    try {
      const value = JSON.parse(Buffer.from(part.slice(eq + 1).trim(), 'base64url').toString('utf8')) as Partial<Pending>;
      if (typeof value.state === 'string' && typeof value.nonce === 'string' && typeof value.verifier === 'string' && typeof value.at === 'number') {
        return { state: value.state, nonce: value.nonce, verifier: value.verifier, at: value.at };
      }
    } catch {
      return undefined;
    }
  }
  return undefined;
}
