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

/** Characters, as the API contract counts them (PRODUCT.md); the octet limits below apply too. */
export const MAX_EMAIL_LENGTH = 254;
/** RFC 5321 §4.5.3.1.1: octets, which RFC 6531 counts in UTF-8. */
const MAX_LOCAL_OCTETS = 64;
/** RFC 5321 §4.5.3.1.3: a path is at most 256 octets, two of them the angle brackets. */
const MAX_ADDRESS_OCTETS = 254;

/**
 * The local part as a sign-up form should take it: a dot-atom (RFC 5322 §3.2.3, the form RFC 5321
 * §4.1.2 calls a Dot-string) of ASCII atext and, per RFC 6531, non-ASCII characters. A plain ASCII
 * local part, the common case, is checked by this expression alone.
 */
const ATEXT = "-A-Za-z0-9!#$%&'*+/=?^_`{|}~";
const ASCII_DOT_ATOM = new RegExp(`^[${ATEXT}]+(?:\\.[${ATEXT}]+)*$`);
const DOT_ATOM = new RegExp(`^[${ATEXT}\\u0080-\\u{10FFFF}]+(?:\\.[${ATEXT}\\u0080-\\u{10FFFF}]+)*$`, 'u');
/**
 * Non-ASCII the specifications allow but no mailbox should have: separators and spaces (Z), controls,
 * format characters such as bidirectional overrides and zero-width spaces, lone surrogates,
 * private-use and unassigned code points (C), and a combining mark with nothing to combine with.
 */
const UNSAFE = /[\p{Z}\p{C}]|^\p{M}|\.\p{M}/u;

/**
 * Splits and normalises an address, or says why it is not one. Strict enough that every address
 * it accepts is one a mail server could take (RFC 5321), without the RFC 5322 forms no sign-up
 * needs: no comments, no folding white space, no quoted local part (`"john doe"@…`), no address
 * literal (`@[192.0.2.1]`), no trailing dot on the domain. The domain must be a host name with at
 * least two labels that DNS could resolve; an internationalised one is read as its A-labels.
 */
export function parseEmail(address: string): ParsedEmail | { error: string } {
  if (address.length > MAX_EMAIL_LENGTH) return { error: `must be at most ${MAX_EMAIL_LENGTH} characters` };
  const at = address.indexOf('@');
  if (at < 0 || at !== address.lastIndexOf('@')) return { error: 'must contain exactly one "@"' };
  const local = address.slice(0, at);
  const rawDomain = address.slice(at + 1);
  const localError = checkLocalPart(local);
  if (localError !== null) return { error: localError };
  // RFC 5321's Domain has no trailing dot: "jane@example.com." is not an address a form should take.
  const domain = rawDomain.endsWith('.') ? null : normalizeDomain(rawDomain);
  if (domain === null) return { error: 'domain is not a valid host name' };
  if (utf8Length(local) + 1 + domain.length > MAX_ADDRESS_OCTETS) return { error: `must be at most ${MAX_ADDRESS_OCTETS} octets once the domain is in ASCII` };
  return { address, local, domain, normalized: `${local}@${domain}` };
}

function checkLocalPart(local: string): string | null {
  if (local.length === 0) return 'local part must not be empty';
  if (ASCII_DOT_ATOM.test(local)) return local.length > MAX_LOCAL_OCTETS ? `local part must be at most ${MAX_LOCAL_OCTETS} octets` : null;
  if (local.startsWith('"')) return 'local part must not be quoted';
  if (!DOT_ATOM.test(local)) {
    return /^\.|\.\.|\.$/.test(local)
      ? 'local part must not start or end with a dot or have two in a row'
      : 'local part may hold letters, digits and !#$%&\'*+-/=?^_`{|}~ only (no spaces, quotes, brackets, backslashes, commas or comments)';
  }
  if (UNSAFE.test(local)) return 'local part must not contain spaces, control, format, private-use or unassigned characters';
  return utf8Length(local) > MAX_LOCAL_OCTETS ? `local part must be at most ${MAX_LOCAL_OCTETS} octets` : null;
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
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
