import { parseNetwork, type IpKey } from '../ip/numeric.js';
import { IpRangeTable } from '../ip/ranges.js';

/**
 * The ranges of one `cidr` condition, read by the parser the IP lists use (`parseNetwork`), so a
 * range means the same in a rule as in `DATA_DIR`: an IPv4-mapped network (`::ffff:203.0.113.0/120`)
 * is its IPv4 network, as an IPv4-mapped address is its IPv4 address; host bits below the prefix
 * are ignored. Held in a range table: one binary search per evaluation, however many ranges.
 */
export type CidrRanges = IpRangeTable<true>;

/** The ranges, or the index of the first text that is not an address or a network. */
export function parseCidrRanges(texts: string[]): CidrRanges | { invalid: number } {
  const builder = IpRangeTable.builder<true>();
  for (let i = 0; i < texts.length; i++) {
    const range = parseNetwork(texts[i]!);
    if (range === null) return { invalid: i };
    builder.add(range, true);
  }
  return builder.build('merge');
}

const NO_WORDS = new Uint32Array(0);

/** An address (no prefix) as the key range tables look up, or `null` when the text is not one. */
export function addressKey(text: string): IpKey | null {
  const range = text.includes('/') ? null : parseNetwork(text);
  if (range === null) return null;
  return range.version === 4 ? { version: 4, v4: range.start, v6: NO_WORDS } : { version: 6, v4: 0, v6: range.start };
}
