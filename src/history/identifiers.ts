import { createHmac, createSecretKey } from 'node:crypto';

/**
 * History identifiers are keyed hashes (PRODUCT.md "Memory: the store"): HMAC-SHA-256 under a
 * secret generated once per store and kept in it, cut to 16 bytes (a collision between two of an
 * account's identifiers is a 2^-64 event at four billion of them). The account is part of the input,
 * so one address hashes differently in two accounts and the tables cannot link them. Without the
 * secret, a row names no one: an e-mail address cannot be hashed and looked up.
 */
export const KEY_BYTES = 16;
export const SECRET_BYTES = 32;

export type IdentifierKind = 'ip' | 'email' | 'device' | 'user' | 'domain';

export type Hasher = (account: string, kind: IdentifierKind, value: string) => Buffer;

export function keyedHasher(secret: Buffer): Hasher {
  if (secret.length < SECRET_BYTES) throw new Error(`the history secret must be at least ${SECRET_BYTES} bytes`);
  // A key object made once: given the bytes, createHmac checks and wraps them on every call, which
  // cost three times the hash itself (12 µs against 4 on Node 24), four or five times an evaluation.
  const key = createSecretKey(secret);
  // The identifiers hashed lately (addresses, devices, users, domains; not e-mail addresses), in
  // two generations of at most HASHED_KEPT each (a hit in the older is copied to the newer; a full
  // newer becomes the older): one address behind many sign-ups, a person who comes back, each
  // hashed once instead of on every evaluation (an HMAC is ~5 µs, the Hmac object's creation most
  // of it: half of the history step's main-thread time in bench/rounds.ts's profile). The keys
  // handed out are shared: callers never write into them.
  let newer = new Map<string, Buffer>();
  let older = new Map<string, Buffer>();
  return (account, kind, value) => {
    const input = `${account}\u0000${kind}\u0000${value}`;
    // E-mail addresses are not kept past their request, even here.
    if (kind === 'email') return createHmac('sha256', key).update(input).digest().subarray(0, KEY_BYTES);
    let hashed = newer.get(input);
    if (hashed !== undefined) return hashed;
    hashed = older.get(input) ?? createHmac('sha256', key).update(input).digest().subarray(0, KEY_BYTES);
    if (newer.size >= HASHED_KEPT) {
      older = newer;
      newer = new Map();
    }
    newer.set(input, hashed);
    return hashed;
  };
}

/**
 * Identifiers whose keyed hash is kept, per generation (two generations): ~200 bytes each (the
 * input string and the 16-byte key), so at most ~1.6 MiB. Memory only, never written anywhere.
 */
export const HASHED_KEPT = 4_096;
