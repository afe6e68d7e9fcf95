import { hashKey, sameHash } from '../keys/key.js';

/**
 * Who may read `/metrics`: anyone who reaches its listener when no token is set (the listener is
 * on 127.0.0.1 unless METRICS_HOST says otherwise), else only `Authorization: Bearer <METRICS_TOKEN>`.
 * The token is kept as its SHA-256 hash and compared in constant time, as API keys are.
 */
export function metricsAccess(token: string | null): (authorization: string | undefined) => boolean {
  if (token === null) return () => true;
  const expected = hashKey(token);
  return (authorization) => {
    // RFC 9110 §11.1: the scheme is case-insensitive.
    const match = authorization === undefined ? null : /^bearer +(\S+) *$/i.exec(authorization);
    return match !== null && sameHash(hashKey(match[1]!), expected);
  };
}

export const METRICS_PATH = '/metrics';
export const METRICS_UNAUTHORIZED = 'Reading metrics takes the metrics token: Authorization: Bearer <METRICS_TOKEN>';
