import { createHmac, createSecretKey, hash, type KeyObject } from 'node:crypto';

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

/** A hasher and the end of its kept keys (the store's close: the timer and what it holds go at once). */
export type KeyedHasher = Hasher & { stop(): void };

export function keyedHasher(secret: Buffer): KeyedHasher {
  if (secret.length < SECRET_BYTES) throw new Error(`the history secret must be at least ${SECRET_BYTES} bytes`);
  // For the long inputs hmacSha256 leaves to an Hmac object: a key object made once (given the
  // bytes, createHmac checks and wraps them on every call, three times the hash itself).
  const key = createSecretKey(secret);
  // The addresses and devices hashed lately, in two generations of at most HASHED_KEPT each (a hit
  // in the older is copied to the newer; a full newer becomes the older, and so does the newer
  // every HASHED_FOR_MS, by a timer, traffic or not): one address behind many sign-ups, a device
  // that comes back, each hashed once instead of on every evaluation (half of the history step's
  // main-thread time in bench/rounds.ts's profile when each took an Hmac object). Only those: an
  // e-mail address, a user id (often an e-mail address too) or a domain is hashed every time and
  // kept by no one past its request; so is a value longer than HASHED_MAX_LENGTH (the bound below
  // holds). A kept address or device leaves memory at most 2 × HASHED_FOR_MS after its last
  // evaluation, erased or not, even on a replica no request reaches any more (the timer stops once
  // both generations are empty). The keys handed out are shared: callers never write into them.
  let newer = new Map<string, Buffer>();
  let older = new Map<string, Buffer>();
  let timer: NodeJS.Timeout | undefined;
  const age = () => {
    older = newer;
    newer = new Map();
    if (older.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  const once = hmacSha256(secret, key);
  const hasher: Hasher = (account, kind, value) => {
    const input = `${account}\u0000${kind}\u0000${value}`;
    if ((kind !== 'ip' && kind !== 'device') || value.length > HASHED_MAX_LENGTH) return once(input);
    if (newer.size >= HASHED_KEPT) age();
    let hashed = newer.get(input);
    if (hashed !== undefined) return hashed;
    hashed = older.get(input) ?? once(input);
    newer.set(input, hashed);
    if (timer === undefined) {
      timer = setInterval(age, HASHED_FOR_MS);
      timer.unref();
    }
    return hashed;
  };
  return Object.assign(hasher, {
    stop() {
      clearInterval(timer);
      timer = undefined;
      newer = new Map();
      older = new Map();
    },
  });
}

/** Input bytes the scratch buffer of hmacSha256 holds (an account, a kind and a value); longer inputs take the slow path. */
const SCRATCH_BYTES = 2_048;

/**
 * HMAC-SHA-256 of a string under `secret`, cut to KEY_BYTES: the same bytes as
 * `createHmac('sha256', secret).update(input).digest()` (RFC 2104: H(K ^ opad || H(K ^ ipad || m))),
 * computed with two one-shot `hash` calls into buffers allocated once. An Hmac object costs more to
 * create than the hash it computes, and a digest returned as a Buffer allocates a backing store of
 * its own: 4.3-4.6 µs a key against 1.6 in a loop on Node 24, ~3× that on the running server, where
 * it runs twice an evaluation or more (the e-mail address and the user id are hashed every time). The
 * buffers are scratch, used and read back within the call (the keys returned are fresh), and the
 * input is wiped from them at once: an e-mail address or a user id is kept by no one past its
 * request, this buffer included. An input that might not fit them takes the Hmac object.
 */
function hmacSha256(secret: Buffer, key: KeyObject): (input: string) => Buffer {
  const BLOCK = 64;
  const block = secret.length > BLOCK ? hash('sha256', secret, 'buffer') : secret;
  const inner = Buffer.alloc(BLOCK + SCRATCH_BYTES, 0x36);
  const outer = Buffer.alloc(BLOCK + 32, 0x5c);
  for (let i = 0; i < block.length; i += 1) {
    inner[i]! ^= block[i]!;
    outer[i]! ^= block[i]!;
  }
  return (input) => {
    // A UTF-16 code unit is at most 3 bytes of UTF-8.
    if (input.length * 3 > SCRATCH_BYTES) return createHmac('sha256', key).update(input).digest().subarray(0, KEY_BYTES);
    const length = inner.write(input, BLOCK, 'utf8');
    const innerDigest = hash('sha256', inner.subarray(0, BLOCK + length), 'binary');
    inner.fill(0, BLOCK, BLOCK + length);
    outer.write(innerDigest, BLOCK, 'latin1');
    // A key of its own 16 bytes: Buffer.from(string) would hand out a slice of the shared 64 KiB
    // pool, and a key kept in the history's memory would keep the whole pool alive with it.
    const digest = hash('sha256', outer, 'binary');
    const out = Buffer.alloc(KEY_BYTES);
    for (let i = 0; i < KEY_BYTES; i += 1) out[i] = digest.charCodeAt(i);
    return out;
  };
}

/**
 * Addresses and devices whose keyed hash is kept, per generation (two generations); values of at
 * most HASHED_MAX_LENGTH characters (an IPv6 address is at most 45, a device hash 64), so an entry
 * is at most ~370 bytes (the input string, the Map slot, the 16-byte key and its buffer; measured
 * when a key was a view on a 32-byte digest of its own, now a smaller 16-byte array: 2.9 MiB for
 * 2 × 4,096 entries of 64 characters): at most ~3 MiB. Memory only, never written or logged.
 */
export const HASHED_KEPT = 4_096;
/** How long a generation of kept hashes lasts, at most. */
export const HASHED_FOR_MS = 5 * 60_000;
/** Longer values are hashed every time, not kept. */
export const HASHED_MAX_LENGTH = 64;
