import { readFile } from 'node:fs/promises';
import { ipv6ToWords, type IpKey, type IpRange } from './numeric.js';
import { IpRangeTable, type IpRangeTableBuilder } from './ranges.js';

/**
 * The ip-location-db ASN CSV (https://github.com/sapics/ip-location-db/tree/main/asn):
 * `range_start,range_end,asn,"organisation"`, inclusive ranges, one file per IP version. The
 * IPv4 `-num` file gives starts and ends as integers, which parse faster than dotted quads.
 */
export interface AsnTable {
  lookup(ip: IpKey): { asn: number; organization: string | null } | null;
  /** Ranges held. */
  entries: number;
  /** Rows that could not be read, or overlapped an earlier row. */
  malformed: number;
}

export async function loadAsnCsv(files: { ipv4Num: string; ipv6: string }): Promise<AsnTable> {
  const builder = IpRangeTable.builder<number>();
  const organizations = new Map<number, string>();
  const [v4, v6] = await Promise.all([readFile(files.ipv4Num, 'latin1'), readFile(files.ipv6, 'latin1')]);
  let malformed = readRows(v4, builder, organizations, (start, end) => {
    const s = Number(start);
    const e = Number(end);
    const ok = Number.isInteger(s) && Number.isInteger(e) && s >= 0 && e <= 0xffffffff && s <= e && start !== '' && end !== '';
    return ok ? { version: 4, start: s, end: e } : null;
  });
  malformed += readRows(v6, builder, organizations, (start, end) => {
    // A cheap shape check: `net.isIP` on 200,000 addresses would double the start-up time of
    // data that comes from a package, not from a caller.
    if (!IPV6_SHAPE.test(start) || !IPV6_SHAPE.test(end)) return null;
    return { version: 6, start: ipv6ToWords(start), end: ipv6ToWords(end) };
  });
  const table = builder.build('first');
  return {
    lookup(ip) {
      const asn = table.get(ip);
      return asn === undefined ? null : { asn, organization: organizations.get(asn) ?? null };
    },
    entries: table.size,
    malformed: malformed + builder.overlapping,
  };
}

const IPV6_SHAPE = /^[0-9a-fA-F:.]{2,45}$/;

/** Reads every row into the builder; returns the number of malformed rows. */
function readRows(
  text: string,
  builder: IpRangeTableBuilder<number>,
  organizations: Map<number, string>,
  rangeOf: (start: string, end: string) => IpRange | null,
): number {
  let malformed = 0;
  let at = 0;
  while (at < text.length) {
    let eol = text.indexOf('\n', at);
    if (eol === -1) eol = text.length;
    const c1 = text.indexOf(',', at);
    const c2 = c1 === -1 ? -1 : text.indexOf(',', c1 + 1);
    const c3 = c2 === -1 ? -1 : text.indexOf(',', c2 + 1);
    if (eol > at) {
      const range = c1 > at && c2 > c1 && c2 < eol ? rangeOf(text.slice(at, c1), text.slice(c1 + 1, c2)) : null;
      const asnEnd = c3 !== -1 && c3 < eol ? c3 : eol;
      const asn = range === null ? NaN : Number(text.slice(c2 + 1, asnEnd));
      if (range === null || !Number.isInteger(asn) || asn <= 0 || asn > 0xffffffff) {
        malformed++;
      } else {
        if (asnEnd < eol && !organizations.has(asn)) {
          organizations.set(asn, organizationOf(text.slice(asnEnd + 1, text.charCodeAt(eol - 1) === 13 ? eol - 1 : eol)));
        }
        builder.add(range, asn);
      }
    }
    at = eol + 1;
  }
  return malformed;
}

/**
 * The CSV field, unquoted, as a string of its own: a slice would keep the whole 24 MB file text
 * alive, and the file is read as latin1 for speed, so the bytes are re-decoded as the UTF-8 they are.
 */
function organizationOf(field: string): string {
  const unquoted = field.startsWith('"') && field.endsWith('"') ? field.slice(1, -1).replaceAll('""', '"') : field;
  return Buffer.from(unquoted, 'latin1').toString('utf8');
}
