import { domainToASCII } from 'node:url';

/** An e-mail address split and normalised once, at validation. */
export interface ParsedEmail {
  /** As sent. */
  address: string;
  local: string;
  /** Lower case, IDN as punycode, no trailing dot. */
  domain: string;
  /** `local@domain`. */
  normalized: string;
}

export const MAX_EMAIL_LENGTH = 254;

/**
 * Splits and normalises an address, or says why it is not one.
 * Deliberately permissive on the local part (RFC 5321 §4.1.2 allows much more than people use),
 * strict on the domain: it must be a hostname with at least two labels that DNS could resolve.
 */
export function parseEmail(address: string): ParsedEmail | { error: string } {
  if (address.length > MAX_EMAIL_LENGTH) return { error: `must be at most ${MAX_EMAIL_LENGTH} characters` };
  const at = address.indexOf('@');
  if (at < 0 || at !== address.lastIndexOf('@')) return { error: 'must contain exactly one "@"' };
  const local = address.slice(0, at);
  const rawDomain = address.slice(at + 1);
  if (local.length === 0 || local.length > 64) return { error: 'local part must be 1 to 64 characters' };
  if (/[\s\x00-\x1f\x7f]/.test(local)) return { error: 'local part must not contain spaces or control characters' };
  // RFC 5321 §4.1.2 dot-string: dots only between characters (a quoted local part may have any).
  if (!isQuoted(local) && /^\.|\.\.|\.$/.test(local)) return { error: 'local part must not start or end with a dot or have two in a row' };
  const domain = normalizeDomain(rawDomain);
  if (domain === null) return { error: 'domain is not a valid host name' };
  return { address, local, domain, normalized: `${local}@${domain}` };
}

function isQuoted(local: string): boolean {
  return local.length >= 2 && local.startsWith('"') && local.endsWith('"');
}

const PLAIN_ASCII = /^[a-z0-9.-]+$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
/**
 * The usual domain in one pass: lower-case ASCII labels of 1–63 characters with no hyphen at either
 * end, at least two of them, no punycode, a top-level label that is not all digits.
 */
const PLAIN_HOST = /^(?!.*xn--)(?:(?!-)[a-z0-9-]{1,63}(?<!-)\.)+(?!-)(?=[a-z0-9-]*[a-z-])[a-z0-9-]{1,63}(?<!-)$/;

/** Lower-cases, converts IDN to punycode (UTS #46), strips one trailing dot; `null` when not a host name. */
export function normalizeDomain(raw: string): string | null {
  // Most addresses need no work at all; the general path gives the same answer for them (tested).
  return raw.length <= 253 && PLAIN_HOST.test(raw) ? raw : normalizeAnyDomain(raw);
}

/** `normalizeDomain` without its shortcut; exported for the test that the two agree. */
export function normalizeAnyDomain(raw: string): string | null {
  const trimmed = raw.endsWith('.') ? raw.slice(0, -1) : raw;
  // `%` would be percent-decoded by the URL parser (`ab%63.com` → `abc.com`): not a host name as sent.
  if (trimmed.length === 0 || /[\s\x00-\x1f\x7f%]/.test(trimmed)) return null;
  const lower = trimmed.toLowerCase();
  // Plain ASCII without punycode labels is its own ASCII form: skip the UTS #46 pass (hot when loading lists).
  const ascii = PLAIN_ASCII.test(lower) && !lower.includes('xn--') ? lower : domainToASCII(lower);
  if (ascii === '' || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  // A top-level label of digits only is an IP literal in disguise, not a domain.
  if (/^\d+$/.test(labels[labels.length - 1]!)) return null;
  return ascii;
}
