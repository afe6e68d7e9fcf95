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

/** The keyed hash of one identifier; `forget` hashes it without keeping it and drops what was kept (erasure). */
export interface Hasher {
  (account: string, kind: IdentifierKind, value: string): Buffer;
  forget(account: string, kind: IdentifierKind, value: string): Buffer;
}

export function keyedHasher(secret: Buffer): Hasher {
  if (secret.length < SECRET_BYTES) throw new Error(`the history secret must be at least ${SECRET_BYTES} bytes`);
  // A key object made once: given the bytes, createHmac checks and wraps them on every call, which
  // cost three times the hash itself (12 µs against 4 on Node 24), four or five times an evaluation.
  const key = createSecretKey(secret);
  // The identifiers hashed lately, in two generations of at most HASHED_KEPT each (a hit in the
  // older is copied to the newer; a full newer, or one older than HASHED_FOR_MS, becomes the older):
  // one address behind many sign-ups, a person who comes back, each hashed once instead of on every
  // evaluation (an HMAC is ~5 µs, the Hmac object's creation most of it; with the e-mail address and
  // the user id hashed each time, a person evaluated again spent ~30 of the main thread's ~380 CPU µs
  // of an evaluation hashing, in bench/rounds.ts's profile). A value longer than HASHED_MAX_LENGTH is
  // hashed every time and not kept, so the bound below holds. Whatever is kept leaves memory at most
  // 2 × HASHED_FOR_MS after its last evaluation, and at once when the person is erased (`forget`).
  // The keys handed out are shared: callers never write into them.
  // By account, then kind, then value: the value as the request carried it (a flat string whose
  // hash V8 keeps), so a hit builds no string; the HMAC's input is built only on a miss.
  let newer = generation();
  let older = generation();
  let since = Date.now();
  const once = (account: string, kind: IdentifierKind, value: string) =>
    createHmac('sha256', key).update(`${account}\u0000${kind}\u0000${value}`).digest().subarray(0, KEY_BYTES);
  const hasher = (account: string, kind: IdentifierKind, value: string): Buffer => {
    if (value.length > HASHED_MAX_LENGTH) return once(account, kind, value);
    const now = Date.now();
    if (newer.size >= HASHED_KEPT || now - since >= HASHED_FOR_MS) {
      older = newer;
      newer = generation();
      since = now;
    }
    const kept = valuesOf(newer, account, kind);
    let hashed = kept.get(value);
    if (hashed !== undefined) return hashed;
    hashed = older.byAccount.get(account)?.get(kind)?.get(value) ?? once(account, kind, value);
    kept.set(value, hashed);
    newer.size += 1;
    return hashed;
  };
  return Object.assign(hasher, {
    forget(account: string, kind: IdentifierKind, value: string): Buffer {
      for (const g of [newer, older]) if (g.byAccount.get(account)?.get(kind)?.delete(value)) g.size -= 1;
      return once(account, kind, value);
    },
  });
}

interface Generation {
  size: number;
  byAccount: Map<string, Map<IdentifierKind, Map<string, Buffer>>>;
}

const generation = (): Generation => ({ size: 0, byAccount: new Map() });

function valuesOf(g: Generation, account: string, kind: IdentifierKind): Map<string, Buffer> {
  let kinds = g.byAccount.get(account);
  if (kinds === undefined) g.byAccount.set(account, (kinds = new Map()));
  let values = kinds.get(kind);
  if (values === undefined) kinds.set(kind, (values = new Map()));
  return values;
}

/**
 * Identifiers whose keyed hash is kept, per generation (two generations); values of at most
 * HASHED_MAX_LENGTH characters (an IPv6 address is at most 45, a device hash 64; most e-mail
 * addresses and user ids), so an entry is at most ~300 bytes (the input string, the Map slot, the
 * 16-byte key and its buffer): at most ~2.5 MiB. Memory only, never written or logged.
 */
export const HASHED_KEPT = 4_096;
/** How long a generation of kept hashes lasts, at most. */
export const HASHED_FOR_MS = 5 * 60_000;
/** Longer values are hashed every time, not kept. */
export const HASHED_MAX_LENGTH = 64;
