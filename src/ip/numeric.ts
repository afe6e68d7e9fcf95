import { isIP } from 'node:net';
import type { ParsedIp } from './address.js';

/**
 * Addresses as numbers, for range tables: IPv4 as one uint32, IPv6 as four uint32 words, most
 * significant first. Four words rather than a BigInt keep comparisons allocation-free.
 */
export interface IpKey {
  version: 4 | 6;
  /** The IPv4 address as uint32; 0 for IPv6. */
  v4: number;
  /** The IPv6 address as four words; empty for IPv4. */
  v6: Uint32Array;
}

const NO_WORDS = new Uint32Array(0);

/** Dotted quad to uint32; the caller has validated the text with `net.isIP`. */
export function ipv4ToNumber(text: string): number {
  let value = 0;
  let octet = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      value = value * 256 + octet;
      octet = 0;
    } else {
      octet = octet * 10 + (c - 48);
    }
  }
  return value * 256 + octet;
}

export function numberToIpv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

/**
 * RFC 4291 text (with `::` and an optional dotted-quad tail) to four words; validated by the caller.
 * A single pass over the characters: the bundled ASN data has 100,000 IPv6 rows to read at start.
 */
export function ipv6ToWords(text: string, out: Uint32Array = new Uint32Array(4), at = 0): Uint32Array {
  const groups = GROUPS;
  groups.fill(0);
  let count = 0;
  let gap = -1; // index of the group where `::` stands
  let value = 0;
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 58) {
      if (digits > 0) groups[count++] = value;
      else if (i > 0 && text.charCodeAt(i - 1) === 58) gap = count;
      value = 0;
      digits = 0;
    } else if (c === 46) {
      // Dotted-quad tail: the rest of the text is an IPv4 address filling two groups.
      const start = text.lastIndexOf(':', i) + 1;
      const v4 = ipv4ToNumber(text.slice(start));
      groups[count++] = v4 >>> 16;
      groups[count++] = v4 & 0xffff;
      digits = 0;
      break;
    } else {
      value = value * 16 + (c <= 57 ? c - 48 : (c | 32) - 87);
      digits++;
    }
  }
  if (digits > 0) groups[count++] = value;
  if (gap !== -1) {
    const tail = count - gap;
    for (let k = 0; k < tail; k++) groups[7 - k] = groups[count - 1 - k]!;
    for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  }
  for (let w = 0; w < 4; w++) out[at + w] = ((groups[2 * w]! << 16) | groups[2 * w + 1]!) >>> 0;
  return out;
}

const GROUPS = new Array<number>(8).fill(0);

export function keyOf(ip: Pick<ParsedIp, 'address' | 'version'>): IpKey {
  return ip.version === 4
    ? { version: 4, v4: ipv4ToNumber(ip.address), v6: NO_WORDS }
    : { version: 6, v4: 0, v6: ipv6ToWords(ip.address) };
}

/** An inclusive range of addresses of one version. */
export type IpRange =
  | { version: 4; start: number; end: number }
  | { version: 6; start: Uint32Array; end: Uint32Array };

/**
 * `a.b.c.d`, `a.b.c.d/n`, `x::y` or `x::y/n` to a range; `null` when malformed. Host bits set below
 * the prefix (`10.1.2.3/8`) are masked off: lists written by hand often carry them.
 * An IPv4-mapped IPv6 network (`::ffff:1.2.3.0/120`) is its IPv4 network, as addresses are.
 */
export function parseNetwork(text: string): IpRange | null {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const bitsText = slash === -1 ? null : text.slice(slash + 1);
  const version = isIP(address);
  if (version === 0 || address.includes('%')) return null;
  const width = version === 4 ? 32 : 128;
  if (bitsText !== null && !/^\d{1,3}$/.test(bitsText)) return null;
  const bits = bitsText === null ? width : Number(bitsText);
  if (bits > width) return null;
  if (version === 4) {
    const value = ipv4ToNumber(address);
    const hostMask = bits === 0 ? 0xffffffff : bits === 32 ? 0 : (2 ** (32 - bits) - 1);
    const start = (value & ~hostMask) >>> 0;
    return { version: 4, start, end: (start | hostMask) >>> 0 };
  }
  const words = ipv6ToWords(address);
  const start = new Uint32Array(4);
  const end = new Uint32Array(4);
  for (let w = 0; w < 4; w++) {
    const wordBits = Math.min(32, Math.max(0, bits - 32 * w));
    const hostMask = wordBits === 32 ? 0 : wordBits === 0 ? 0xffffffff : 2 ** (32 - wordBits) - 1;
    start[w] = (words[w]! & ~hostMask) >>> 0;
    end[w] = (start[w]! | hostMask) >>> 0;
  }
  if (bits >= 96 && start[0] === 0 && start[1] === 0 && start[2] === 0xffff) {
    return { version: 4, start: start[3]!, end: end[3]! };
  }
  return { version: 6, start, end };
}

/** Lexicographic comparison of four-word addresses at offsets `i` (in `a`) and `j` (in `b`). */
export function compareWords(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  for (let w = 0; w < 4; w++) {
    const d = a[i + w]! - b[j + w]!;
    if (d !== 0) return d;
  }
  return 0;
}
