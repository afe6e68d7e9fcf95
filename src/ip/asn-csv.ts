import { isIP } from 'node:net';
import { FILE_CAPS } from '../files/caps.js';
import { readBounded } from '../files/read.js';
import { buffers, inWorker, type Moved } from '../files/worker.js';
import { ipv6ToWords, type IpKey } from './numeric.js';
import { buffersOf, IpRangeTable, type IpRangeTableBuilder, type IpRangeTableParts } from './ranges.js';

/**
 * The ip-location-db ASN CSV (https://github.com/sapics/ip-location-db/tree/main/asn):
 * `range_start,range_end,asn,"organisation"`, inclusive ranges, one file per IP version. The
 * IPv4 `-num` file gives starts and ends as integers. Some 515,000 rows are read at start, so they
 * are parsed from the file's bytes: no 30 MB string, no string per field. They are read again
 * while serving when a MaxMind ASN database goes away, so, like the DATA_DIR lists, they are read
 * and built in a worker thread (src/files/worker.ts), and what comes back is typed arrays and one
 * string of names: half a second of work the event loop does not wait for, and no 90,000 names
 * for its collector to copy.
 */
export interface AsnTable {
  lookup(ip: IpKey): { asn: number; organization: string | null } | null;
  /** Ranges held. */
  entries: number;
  /** Rows that could not be read. */
  malformed: number;
  /** Rows that overlapped an earlier row of another ASN: cut to what lies beyond it, or dropped (see `IpRangeTable.builder`). */
  overlapping: number;
}

interface AsnFiles {
  ipv4Num: string;
  ipv6: string;
}

export async function loadAsnCsv(files: AsnFiles, signal?: AbortSignal): Promise<AsnTable> {
  const built = await inWorker<BuiltAsnTable>(import.meta.url, buildAsnTable.name, [files], { signal });
  const table = IpRangeTable.fromParts(built.table);
  const { asns, names, nameStarts } = built;
  return {
    lookup(ip) {
      const i = table.get(ip);
      if (i === undefined) return null;
      return { asn: asns[i]!, organization: nameStarts[i] === nameStarts[i + 1] ? null : names.slice(nameStarts[i], nameStarts[i + 1]) };
    },
    entries: table.size,
    malformed: built.malformed,
    overlapping: built.overlapping,
  };
}

/**
 * The range table's values are indices into `asns`; ASN `asns[i]` is named
 * `names.slice(nameStarts[i], nameStarts[i + 1])`, where an empty name is none.
 */
interface BuiltAsnTable {
  table: IpRangeTableParts<number>;
  asns: Uint32Array;
  names: string;
  nameStarts: Uint32Array;
  malformed: number;
  overlapping: number;
}

/** The worker's half of `loadAsnCsv`: the arrays are moved back, not copied. */
export async function buildAsnTable(files: AsnFiles): Promise<Moved<BuiltAsnTable>> {
  const builder = IpRangeTable.numbers();
  const organizations = new Organizations();
  const read = async (path: string) => (await readBounded(path, FILE_CAPS.asnCsv)).bytes;
  const [v4, v6] = await Promise.all([read(files.ipv4Num), read(files.ipv6)]);
  const malformed = readRows(v4, 4, builder, organizations) + readRows(v6, 6, builder, organizations);
  const table = builder.build('first').parts();
  const { asns, names, nameStarts } = organizations.packed();
  return {
    value: { table, asns, names, nameStarts, malformed, overlapping: builder.overlapping },
    transfer: [...buffersOf(table), ...buffers(asns, nameStarts)],
  };
}

/** Each ASN seen, numbered in the order first seen, with the first name given for it. */
class Organizations {
  private readonly index = new Map<number, number>();
  private readonly asns: number[] = [];
  private readonly names: string[] = [];

  /** The ASN's number, for the range table. */
  indexOf(asn: number): number {
    let i = this.index.get(asn);
    if (i === undefined) {
      i = this.asns.push(asn) - 1;
      this.names.push('');
      this.index.set(asn, i);
    }
    return i;
  }

  isNamed(i: number): boolean {
    return this.names[i] !== '';
  }

  name(i: number, name: string): void {
    this.names[i] = name;
  }

  /** One string of names and where each starts: one string crosses threads in one copy, 90,000 would not. */
  packed(): { asns: Uint32Array; names: string; nameStarts: Uint32Array } {
    const nameStarts = new Uint32Array(this.names.length + 1);
    for (let i = 0; i < this.names.length; i++) nameStarts[i + 1] = nameStarts[i]! + this.names[i]!.length;
    return { asns: Uint32Array.from(this.asns), names: this.names.join(''), nameStarts };
  }
}

const COMMA = 44;
const NEWLINE = 10;
const RETURN = 13;

/** Reads every row into the builder; returns the number of malformed rows. */
function readRows(
  csv: Buffer,
  version: 4 | 6,
  builder: IpRangeTableBuilder<number>,
  organizations: Organizations,
): number {
  let malformed = 0;
  const start6 = new Uint32Array(4);
  const end6 = new Uint32Array(4);
  let at = 0;
  while (at < csv.length) {
    // One pass over the line for its end and first three commas: a byte loop the JIT compiles
    // beats four native `indexOf` calls per row.
    let c1 = -1;
    let c2 = -1;
    let c3 = -1;
    let eol = at;
    for (; eol < csv.length; eol++) {
      const byte = csv[eol]!;
      if (byte === NEWLINE) break;
      if (byte === COMMA && c3 === -1) {
        if (c1 === -1) c1 = eol;
        else if (c2 === -1) c2 = eol;
        else c3 = eol;
      }
    }
    const end = eol > at && csv[eol - 1] === RETURN ? eol - 1 : eol;
    if (end > at) {
      const asn = c2 === -1 ? -1 : decimal(csv, c2 + 1, c3 === -1 ? end : c3);
      const first = version === 4 ? decimal(csv, at, c1) : -1;
      const last = version === 4 ? decimal(csv, c1 + 1, c2) : -1;
      const ok = asn > 0 && (version === 4
        ? first >= 0 && last >= first
        : ipv6Words(csv, at, c1, start6) && ipv6Words(csv, c1 + 1, c2, end6));
      if (ok) {
        const i = organizations.indexOf(asn);
        if (version === 4) builder.addV4(first, last, i);
        else builder.addV6(start6, end6, i);
        if (c3 !== -1 && !organizations.isNamed(i)) organizations.name(i, unquote(csv.toString('utf8', c3 + 1, end)));
      } else {
        malformed++;
      }
    }
    at = eol + 1;
  }
  return malformed;
}

/** The unsigned decimal in bytes `from..to`, or -1 (empty, not digits, or beyond 2^32 - 1). */
function decimal(csv: Buffer, from: number, to: number): number {
  if (to <= from || to - from > 10) return -1;
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = csv[i]! - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value <= 0xffffffff ? value : -1;
}

/**
 * IPv6 text in bytes `from..to` into four words; false when it is not an IPv6 address. Plain hex
 * groups with at most one `::` are read here; anything else (a dotted-quad tail) goes through
 * `net.isIP` and the text parser.
 */
function ipv6Words(csv: Buffer, from: number, to: number, out: Uint32Array): boolean {
  const groups = GROUPS;
  let count = 0;
  let gap = -1;
  let value = 0;
  let digits = 0;
  for (let i = from; i < to; i++) {
    const c = csv[i]!;
    if (c === 58) {
      if (digits > 0) {
        if (count === 8) return false;
        groups[count++] = value;
      } else if (i > from && csv[i - 1] === 58) {
        if (gap !== -1) return false;
        gap = count;
      } else if (i + 1 >= to || csv[i + 1] !== 58) {
        return false; // a lone ':' with no group before it
      }
      value = 0;
      digits = 0;
      continue;
    }
    const hex = c >= 48 && c <= 57 ? c - 48 : (c | 32) >= 97 && (c | 32) <= 102 ? (c | 32) - 87 : -1;
    if (hex === -1) return ipv6Text(csv, from, to, out);
    if (++digits > 4) return false;
    value = value * 16 + hex;
  }
  if (digits > 0) {
    if (count === 8) return false;
    groups[count++] = value;
  } else if (to - from < 2 || csv[to - 1] !== 58 || csv[to - 2] !== 58) {
    return false; // ends with a single ':'
  }
  if (gap === -1 ? count !== 8 : count > 7) return false;
  const tail = gap === -1 ? 0 : count - gap;
  for (let k = 0; k < tail; k++) groups[7 - k] = groups[count - 1 - k]!;
  if (gap !== -1) for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  for (let w = 0; w < 4; w++) out[w] = ((groups[2 * w]! << 16) | groups[2 * w + 1]!) >>> 0;
  return true;
}

const GROUPS = new Array<number>(8).fill(0);

function ipv6Text(csv: Buffer, from: number, to: number, out: Uint32Array): boolean {
  const text = csv.toString('latin1', from, to);
  if (isIP(text) !== 6) return false;
  ipv6ToWords(text, out);
  return true;
}

function unquote(field: string): string {
  return field.length >= 2 && field.startsWith('"') && field.endsWith('"') ? field.slice(1, -1).replaceAll('""', '"') : field;
}
