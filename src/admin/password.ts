import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { problems } from '../http/problem.js';

/**
 * Console passwords, hashed with scrypt from node:crypto (RFC 7914). Parameters: N = 2^14,
 * r = 8, p = 5, a 16-byte random salt, a 32-byte hash. That is one of the settings OWASP's
 * Password Storage Cheat Sheet lists as equal in strength to its first choice (N = 2^17, r = 8,
 * p = 1) while it takes 16 MiB of memory per hash instead of 128 MiB; about 0.2 s of one core
 * here. The parameters are written into the stored hash (`scrypt$N$r$p$salt$hash`), so they can be
 * raised later without invalidating existing passwords.
 *
 * Hashing is the one costly thing a stranger can make the admin API do, so at most
 * `MAX_CONCURRENT` hashes run at once (32 MiB) and at most `MAX_WAITING` wait; past that a login
 * is answered 429 at once rather than queued without bound.
 */
export const PASSWORD_MIN_LENGTH = 12;
/** A bound on what is hashed (scrypt reads the whole password each round of its PBKDF2 step). */
export const PASSWORD_MAX_LENGTH = 256;

const PARAMETERS = { N: 2 ** 14, r: 8, p: 5 } as const;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;
const MAX_CONCURRENT = 2;
const MAX_WAITING = 32;
/** Largest parameters a stored hash may name: a hash from a future version, not a memory bomb. */
const MAX_N = 2 ** 20;

const derive = (password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    // maxmem: 128 * N * r bytes are needed; Node's default ceiling (32 MiB) is too low for larger N.
    const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });

let running = 0;
const waiting: Array<() => void> = [];

/** Runs `work` when a hashing slot is free; refuses at once when too many already wait. */
async function bounded<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT) {
    if (waiting.length >= MAX_WAITING) throw problems.tooManyAttempts(1, 'Too many logins are being checked at once');
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else {
    running += 1;
  }
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    // The slot passes straight to the next waiter; only when none waits is it freed.
    if (next) next();
    else running -= 1;
  }
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await bounded(() => derive(password, salt, PARAMETERS));
  return ['scrypt', PARAMETERS.N, PARAMETERS.r, PARAMETERS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Whether `password` matches `stored`, compared in constant time. A malformed hash matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  if (!Number.isInteger(params.N) || params.N < 2 || params.N > MAX_N || !(params.r >= 1 && params.r <= 32) || !(params.p >= 1 && params.p <= 16)) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await bounded(() => derive(password, Buffer.from(salt, 'base64'), params));
  return expected.length === key.length && timingSafeEqual(expected, key);
}

/**
 * A hash no password was ever given for: checked when the e-mail address is unknown, so a login
 * for an unknown address costs what a wrong password costs and does not tell the two apart.
 */
let decoy: Promise<string> | undefined;
export const decoyHash = (): Promise<string> => (decoy ??= hashPassword(randomBytes(32).toString('base64')));

/** A one-time password for `npm run admin` and resets: 20 characters of base64url (120 bits). */
export const oneTimePassword = (): string => randomBytes(15).toString('base64url');

/** Why a chosen password is refused, or null. */
export function passwordProblem(password: string, email?: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  if (email !== undefined && password.trim().toLowerCase() === email.trim().toLowerCase()) return 'must not be the e-mail address';
  return null;
}
