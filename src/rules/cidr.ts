import { isIP } from 'node:net';

/**
 * CIDR ranges as bytes, so IPv4 and IPv6 share one prefix comparison. Parsed once when the rule file
 * loads; the address under test is parsed once per evaluation (see engine.ts).
 */
export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** 4 or 16 bytes, or `null` when the text is not an IP address. */
export function addressBytes(address: string): Uint8Array | null {
  // Fast path for the common case, run once per evaluation: isIP's pattern costs more than the rest.
  const quad = DOTTED_QUAD.exec(address);
  if (quad && !/(^|\.)0\d/.test(address)) {
    const bytes = Uint8Array.of(+quad[1]!, +quad[2]!, +quad[3]!, +quad[4]!);
    return bytes.every((b, i) => b === +quad[i + 1]!) ? bytes : null; // a part above 255 wrapped
  }
  if (isIP(address) !== 6) return null;
  // An IPv4 tail (::ffff:1.2.3.4) is the last two words: rewrite it in hex and parse one way.
  const text = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = words(head);
  const right = rest === undefined ? [] : words(rest);
  const all = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((word, i) => {
    bytes[i * 2] = word >> 8;
    bytes[i * 2 + 1] = word & 255;
  });
  return bytes;
}

/** `10.0.0.0/8`, `2001:db8::/32`, or a bare address (a /32 or /128). `null` when malformed. */
export function parseCidr(text: string): Cidr | null {
  const [address, bits, ...extra] = text.split('/');
  if (extra.length > 0 || address === undefined) return null;
  const bytes = addressBytes(address);
  if (bytes === null) return null;
  const max = bytes.length * 8;
  if (bits === undefined) return { bytes, prefix: max };
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
  return { bytes, prefix: Number(bits) };
}

const words = (part: string): number[] => (part === '' ? [] : part.split(':').map((w) => parseInt(w, 16)));

export function cidrContains(cidr: Cidr, address: Uint8Array): boolean {
  if (cidr.bytes.length !== address.length) return false;
  const whole = cidr.prefix >> 3;
  for (let i = 0; i < whole; i++) if (cidr.bytes[i] !== address[i]) return false;
  const rest = cidr.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (cidr.bytes[whole]! & mask) === (address[whole]! & mask);
}
