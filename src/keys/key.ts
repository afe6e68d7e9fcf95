import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys are 256 random bits; they are stored only as SHA-256 hashes. A slow password hash
 * (scrypt, argon2) buys nothing for keys this long and would cost every request milliseconds.
 */
export const MIN_KEY_LENGTH = 32;
export const KEY_PREFIX = 'rk_';

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
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
