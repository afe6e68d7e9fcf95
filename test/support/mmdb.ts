import { isIP } from 'node:net';

/**
 * A small MaxMind DB writer for tests (format: https://maxmind.github.io/MaxMind-DB/): builds the
 * binary search tree from networks, the data section (records deduplicated) and the metadata, so
 * tests read real `.mmdb` files with the `maxmind` package. No maintained npm writer exists.
 *
 * Values: strings, booleans, integers (uint32 when 0..2^32-1, else int32), doubles (non-integer
 * numbers, or wrap with `double(x)` as the official schemas do for latitude/longitude), arrays and
 * maps. Later networks override earlier ones where they overlap (a more specific network inserted
 * after a wider one carves it). Files that lie can be written too: no networks at all, a
 * `node_count` other than the tree's, values of any type where the schema wants another.
 */
export type MmdbValue = string | number | boolean | MmdbDouble | MmdbValue[] | { [key: string]: MmdbValue };

export class MmdbDouble {
  constructor(readonly value: number) {}
}
export const double = (value: number): MmdbDouble => new MmdbDouble(value);

export interface MmdbNetwork {
  /** `a.b.c.d/n` or `x::/n`; IPv4 networks in an IPv6 tree are placed at `::a.b.c.d/(96+n)`, as MaxMind does. */
  network: string;
  data: MmdbValue;
}

export interface MmdbOptions {
  databaseType: string;
  ipVersion: 4 | 6;
  networks: MmdbNetwork[];
  recordSize?: 24 | 28 | 32;
  buildEpoch?: Date;
  languages?: string[];
  description?: Record<string, string>;
  /** Written as `node_count` instead of the true count: a file whose metadata lies. */
  nodeCount?: number;
}

type Record_ = Node | { data: number } | null;
interface Node {
  left: Record_;
  right: Record_;
  id?: number;
}

const isNode = (r: Record_): r is Node => r !== null && 'left' in r;

export function writeMmdb(options: MmdbOptions): Buffer {
  const recordSize = options.recordSize ?? 28;
  const data = new DataSection();
  const root: Node = { left: null, right: null };
  for (const { network, data: value } of options.networks) {
    insert(root, networkBits(network, options.ipVersion), { data: data.add(value) });
  }

  // Number the nodes breadth first; data records point past the node count.
  const nodes: Node[] = [];
  const queue: Node[] = [root];
  while (queue.length > 0) {
    const node = queue.shift()!;
    node.id = nodes.push(node) - 1;
    for (const child of [node.left, node.right]) if (isNode(child)) queue.push(child);
  }
  const nodeCount = nodes.length;
  const recordValue = (r: Record_): number =>
    r === null ? nodeCount : isNode(r) ? r.id! : nodeCount + 16 + r.data;

  const nodeBytes = (recordSize * 2) / 8;
  const tree = Buffer.alloc(nodeCount * nodeBytes);
  for (const node of nodes) writeNode(tree, node.id! * nodeBytes, recordSize, recordValue(node.left), recordValue(node.right));

  const metadata = encode({
    node_count: uint32(options.nodeCount ?? nodeCount),
    record_size: uint16(recordSize),
    ip_version: uint16(options.ipVersion),
    database_type: options.databaseType,
    languages: options.languages ?? ['en'],
    binary_format_major_version: uint16(2),
    binary_format_minor_version: uint16(0),
    build_epoch: uint64(Math.floor((options.buildEpoch ?? new Date('2026-01-01T00:00:00Z')).getTime() / 1000)),
    description: options.description ?? { en: `${options.databaseType} written by the test suite` },
  });
  return Buffer.concat([tree, Buffer.alloc(16), data.bytes(), METADATA_MARKER, metadata]);
}

const METADATA_MARKER = Buffer.concat([Buffer.from([0xab, 0xcd, 0xef]), Buffer.from('MaxMind.com')]);

function insert(root: Node, bits: number[], leaf: { data: number }): void {
  let node = root;
  for (let depth = 0; depth < bits.length; depth++) {
    const side = bits[depth] === 1 ? 'right' : 'left';
    if (depth === bits.length - 1) {
      node[side] = leaf;
      return;
    }
    const child = node[side];
    // A wider network's leaf on the way down is split: both halves keep its data.
    const next: Node = isNode(child) ? child : { left: child, right: child };
    node[side] = next;
    node = next;
  }
}

function networkBits(network: string, ipVersion: 4 | 6): number[] {
  const [address = '', prefixText] = network.split('/');
  const version = isIP(address);
  if (version === 0) throw new Error(`not a network: ${network}`);
  if (version === 6 && ipVersion === 4) throw new Error(`IPv6 network ${network} in an IPv4 tree`);
  const bytes = version === 4 ? address.split('.').map(Number) : ipv6Bytes(address);
  const width = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? width : Number(prefixText);
  const bits: number[] = [];
  if (version === 4 && ipVersion === 6) for (let i = 0; i < 96; i++) bits.push(0);
  for (let i = 0; i < prefix; i++) bits.push((bytes[i >> 3]! >> (7 - (i & 7))) & 1);
  if (bits.length === 0) throw new Error('a network of prefix 0 is not supported');
  return bits;
}

function ipv6Bytes(address: string): number[] {
  const url = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head = '', tail = ''] = url.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === '' ? [] : tail.split(':');
  const groups = url.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 255];
  });
}

function writeNode(buf: Buffer, at: number, recordSize: number, left: number, right: number): void {
  if (recordSize === 24) {
    buf.writeUIntBE(left, at, 3);
    buf.writeUIntBE(right, at + 3, 3);
  } else if (recordSize === 28) {
    // The middle byte holds the high nibbles: left's in the upper half, right's in the lower.
    buf.writeUIntBE(left & 0xffffff, at, 3);
    buf[at + 3] = ((left >>> 24) << 4) | (right >>> 24);
    buf.writeUIntBE(right & 0xffffff, at + 4, 3);
  } else {
    buf.writeUInt32BE(left, at);
    buf.writeUInt32BE(right, at + 4);
  }
}

// Typed integers for the metadata, whose schema fixes them.
class Typed {
  constructor(readonly type: number, readonly value: number) {}
}
const uint16 = (v: number) => new Typed(5, v);
const uint32 = (v: number) => new Typed(6, v);
const uint64 = (v: number) => new Typed(9, v);

class DataSection {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly offsets = new Map<string, number>();

  /** Offset of the value in the data section, encoding it once per distinct value. */
  add(value: MmdbValue): number {
    const bytes = encode(value);
    const key = bytes.toString('hex');
    const known = this.offsets.get(key);
    if (known !== undefined) return known;
    const offset = this.size;
    this.chunks.push(bytes);
    this.size += bytes.length;
    this.offsets.set(key, offset);
    return offset;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** Control byte(s) for a type and payload size (spec: "Data Field Format"). */
function control(type: number, size: number): Buffer {
  const head: number[] = [];
  let sizeBits: number;
  const extra: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 285) {
    sizeBits = 29;
    extra.push(size - 29);
  } else if (size < 65821) {
    sizeBits = 30;
    extra.push((size - 285) >> 8, (size - 285) & 255);
  } else {
    sizeBits = 31;
    const s = size - 65821;
    extra.push(s >> 16, (s >> 8) & 255, s & 255);
  }
  if (type <= 7) head.push((type << 5) | sizeBits);
  else head.push(sizeBits, type - 7);
  return Buffer.from([...head, ...extra]);
}

function unsigned(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v > 0) {
    bytes.unshift(v % 256);
    v = Math.floor(v / 256);
  }
  return Buffer.from(bytes);
}

function encode(value: MmdbValue | Typed): Buffer {
  if (value instanceof Typed) {
    const payload = unsigned(value.value);
    return Buffer.concat([control(value.type, payload.length), payload]);
  }
  if (value instanceof MmdbDouble) {
    const payload = Buffer.alloc(8);
    payload.writeDoubleBE(value.value);
    return Buffer.concat([control(3, 8), payload]);
  }
  if (typeof value === 'string') {
    const payload = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, payload.length), payload]);
  }
  if (typeof value === 'boolean') return control(14, value ? 1 : 0);
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return encode(double(value));
    if (value >= 0 && value <= 0xffffffff) return encode(uint32(value));
    const payload = Buffer.alloc(4);
    payload.writeInt32BE(value);
    return Buffer.concat([control(8, 4), payload]);
  }
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map(encode)]);
  const entries = Object.entries(value);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, v]) => [encode(k), encode(v)])]);
}

// Records in the official schemas (https://dev.maxmind.com/geoip/docs/databases).

const names = (en: string) => ({ en });

export interface CityFixture {
  countryCode: string;
  country: string;
  continentCode?: string;
  region?: { code: string; name: string };
  city?: string;
  postalCode?: string;
  latitude?: number;
  longitude?: number;
  accuracyRadius?: number;
  timeZone?: string;
}

export function cityRecord(c: CityFixture): MmdbValue {
  const country = { geoname_id: 1000 + c.countryCode.charCodeAt(0), iso_code: c.countryCode, names: names(c.country) };
  const record: Record<string, MmdbValue> = {
    continent: { code: c.continentCode ?? 'EU', geoname_id: 6255148, names: names('Europe') },
    country,
    registered_country: country,
  };
  if (c.city) record.city = { geoname_id: 2643743, names: names(c.city) };
  if (c.latitude !== undefined && c.longitude !== undefined) {
    record.location = {
      accuracy_radius: c.accuracyRadius ?? 100,
      latitude: double(c.latitude),
      longitude: double(c.longitude),
      ...(c.timeZone ? { time_zone: c.timeZone } : {}),
    };
  }
  if (c.postalCode) record.postal = { code: c.postalCode };
  if (c.region) record.subdivisions = [{ geoname_id: 6269131, iso_code: c.region.code, names: names(c.region.name) }];
  return record;
}

export const asnRecord = (asn: number, organization: string): MmdbValue => ({
  autonomous_system_number: asn,
  autonomous_system_organization: organization,
});

export interface AnonymousFlags {
  vpn?: boolean;
  hosting?: boolean;
  publicProxy?: boolean;
  residentialProxy?: boolean;
  tor?: boolean;
}

/** Only true flags are stored, as in the official database; `is_anonymous` is set when any is. */
export function anonymousIpRecord(f: AnonymousFlags): MmdbValue {
  const record: Record<string, MmdbValue> = { is_anonymous: true };
  if (f.vpn) record.is_anonymous_vpn = true;
  if (f.hosting) record.is_hosting_provider = true;
  if (f.publicProxy) record.is_public_proxy = true;
  if (f.residentialProxy) record.is_residential_proxy = true;
  if (f.tor) record.is_tor_exit_node = true;
  return record;
}

export const cityDatabase = (ipVersion: 4 | 6, networks: MmdbNetwork[], databaseType = 'GeoLite2-City') =>
  writeMmdb({ databaseType, ipVersion, networks });
export const asnDatabase = (ipVersion: 4 | 6, networks: MmdbNetwork[], databaseType = 'GeoLite2-ASN') =>
  writeMmdb({ databaseType, ipVersion, networks });
export const anonymousIpDatabase = (ipVersion: 4 | 6, networks: MmdbNetwork[]) =>
  writeMmdb({ databaseType: 'GeoIP2-Anonymous-IP', ipVersion, networks });
