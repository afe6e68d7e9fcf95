import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys are 256 random bits; they are stored only as SHA-256 hashes. A slow password hash
 * (scrypt, argon2) buys nothing for keys this long and would cost every request milliseconds.
 */
export const MIN_KEY_LENGTH = 32;
export const KEY_PREFIX = 'rk_';
/** An account has at most two keys, both valid at once, so one can be replaced while the other serves. */
export const MAX_KEYS_PER_ACCOUNT = 2;
/** Characters of a key kept as its non-secret prefix (`rk_` and 6 of its 43 random characters: 36 of 256 bits). */
const PREFIX_LENGTH = KEY_PREFIX.length + 6;

/** RFC 6750 §2.1 b64token: the only characters a Bearer credential can carry, so the only ones a key may have. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Why a key given by an operator (API_KEYS) can never be presented, or null when it can. */
export function keyProblem(key: string): string | null {
  if (!B64TOKEN.test(key)) {
    return 'has characters an Authorization: Bearer header cannot carry (letters, digits and - . _ ~ + / only, then = padding)';
  }
  if (key.length < MIN_KEY_LENGTH) return `is ${key.length} characters; keys must be at least ${MIN_KEY_LENGTH}`;
  return null;
}

export function hashKey(key: string): string {
  // One-shot crypto.hash: no Hash object per request.
  return `sha256:${hash('sha256', key, 'hex')}`;
}

/** Constant-time comparison of two `sha256:<hex>` hashes. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A short, non-secret id for a key (shown in lists and logs): the first hex digits of its hash. */
export function keyIdOf(hash: string): string {
  return `key_${hash.slice('sha256:'.length, 'sha256:'.length + 12)}`;
}

/** The first characters of a key, shown beside its id so a person can tell which key they hold. */
export function keyPrefixOf(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}

/** What the admin API shows of the development key (`.dev-api-key`): never the key. */
export interface DevelopmentKeyInfo {
  id: string;
  prefix: string;
  /** The file it is kept in, relative to the service's working directory. */
  file: string;
}
