import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

/**
 * A real OpenID Connect provider on loopback for the single sign-on tests: `oidc-provider`
 * (node-oidc-provider, certified, by the author of openid-client), with one confidential client
 * for the service and the people it knows (`users`: login → e-mail address). Its own sign-in page
 * is a small form (a person's login, no password: the provider's own authentication is not under
 * test) that also grants the scopes asked, so a test or a browser goes straight back to the
 * service. Nothing here talks to anything but 127.0.0.1.
 *
 * `issuer` is how the provider names itself; the service may be given another URL for the same
 * server (`http://localhost:port` for `http://127.0.0.1:port`) to test a wrong issuer.
 */
export interface TestProvider {
  issuer: string;
  port: number;
  clientId: string;
  clientSecret: string;
  /** Registers the redirect URL (once the service's port is known) and starts answering. */
  serve(redirectUrl: string): void;
  close(): Promise<void>;
}

export const CLIENT_ID = 'risk-console';
export const CLIENT_SECRET = 'a-client-secret-of-the-test-provider-0123456789';

export async function startTestProvider(users: Record<string, { email: string; email_verified?: boolean }>, options: { idTokenTtlSeconds?: number; hostname?: 'localhost' } = {}): Promise<TestProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  // `localhost` makes the provider another site than a service on 127.0.0.1 (a browser's SameSite rules then apply).
  const issuer = `http://${options.hostname ?? '127.0.0.1'}:${port}`;
  return {
    issuer, port, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET,
    serve(redirectUrl) {
      const configuration: Configuration = {
        clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [redirectUrl], grant_types: ['authorization_code'], response_types: ['code'] }],
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        findAccount: (_ctx, id) => {
          const person = users[id];
          if (!person) return undefined;
          return { accountId: id, claims: () => ({ sub: id, email: person.email, email_verified: person.email_verified ?? true }) };
        },
        features: { devInteractions: { enabled: false } },
        interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
        cookies: { keys: ['test-provider-cookie-key-0123456789'] },
        ttl: { IdToken: options.idTokenTtlSeconds ?? 3600, AuthorizationCode: 60, AccessToken: 600, Interaction: 600, Grant: 600, Session: 600 },
        // The test provider's log of refused requests is noise in the test output.
        renderError: (ctx, out) => {
          ctx.type = 'json';
          ctx.body = out;
        },
      };
      const provider = new Provider(issuer, configuration);
      const oidc = provider.callback();
      handler = (req, res) => {
        const match = /^\/interaction\/([\w-]+)$/.exec(req.url ?? '');
        if (!match) return oidc(req, res);
        void interaction(provider, req, res, match[1]!).catch((error: unknown) => res.writeHead(500).end(String(error)));
      };
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const page = (body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test provider</title></head><body><main>${body}</main></body></html>`;

/** A port free on 127.0.0.1 now (for a service whose URL must be known before it starts). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** The provider's sign-in page: GET shows the form, POST signs the person in and grants what was asked. */
async function interaction(provider: Provider, req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(
      `<h1>Test provider</h1><form method="post" action="/interaction/${uid}"><label for="login">Login</label> <input id="login" name="login" required> <button type="submit">Sign in</button></form>`,
    ));
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const login = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('login') ?? '';
  const grant = new provider.Grant({ accountId: login, clientId: String(details.params.client_id) });
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId: login }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

/**
 * What a browser does at the provider, without one: follows the authorization URL, signs in as
 * `login` on the provider's form, and resolves with the URL the provider sends the browser back to
 * (the service's callback with `code`, `state` and `iss`, or with an `error`).
 */
export async function signInAtProvider(authorizationUrl: string, login: string): Promise<string> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
  };
  const origin = new URL(authorizationUrl).origin;
  let url = authorizationUrl;
  let init: RequestInit = {};
  for (let hop = 0; hop < 10; hop++) {
    if (!url.startsWith(origin)) return url;
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie: cookieHeader() } });
    keep(response);
    const next = response.headers.get('location');
    if (next !== null) {
      url = new URL(next, url).href;
      init = {};
      continue;
    }
    const html = await response.text();
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    if (response.status !== 200 || action === undefined) throw new Error(`the test provider answered ${response.status}: ${html.slice(0, 300)}`);
    url = new URL(action, url).href;
    init = { method: 'POST', body: new URLSearchParams({ login }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('the test provider redirected too often');
}
