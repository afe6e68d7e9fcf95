import bearerAuth from '@fastify/bearer-auth';
import type { FastifyInstance } from 'fastify';
import type { Account } from '../core/ports.js';
import type { KeyStore } from '../keys/key-store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by authentication on every `/v1` route. */
    account: Account | null;
  }
}

/**
 * `Authorization: Bearer <key>` on every route of the scope it is registered in. The plugin's own
 * reply is not used (`addHook: false`): its errors go to our error handler, which renders a problem
 * with `WWW-Authenticate`.
 */
export async function registerAuthentication(scope: FastifyInstance, keys: KeyStore): Promise<void> {
  await scope.register(bearerAuth, {
    addHook: false,
    keys: [],
    // RFC 9110 §11.1: the scheme is case-insensitive; 'rfc6749' mode accepts `bearer` as well as `Bearer`.
    specCompliance: 'rfc6749',
    // A failed attempt is routine traffic, not an error of ours; the one log line per request records it.
    verifyErrorLogLevel: 'debug',
    auth(key, request) {
      const account = keys.authenticate(key);
      request.account = account;
      return account !== null;
    },
  });
  scope.addHook('onRequest', scope.verifyBearerAuth!);
}
