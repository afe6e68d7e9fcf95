import { Reader, type Response } from 'maxmind';
import { FILE_CAPS } from '../files/caps.js';
import { readBounded } from '../files/read.js';
import type { ParsedIp } from './address.js';
import { TreeError, walkTree, type TreeShape } from './mmdb-tree.js';

/**
 * MaxMind DB files (https://maxmind.github.io/MaxMind-DB/) read with the `maxmind` package's
 * `Reader` from a buffer we loaded and checked ourselves; `maxmind.open`'s `watchForUpdates` is
 * not used because a corrupt replacement file kills the process.
 */
export type MmdbKind = 'city' | 'asn' | 'anonymous-ip' | 'country';

/** Which `database_type` values each kind accepts (GeoIP2, GeoLite2, DB-IP and ip-location-db spellings). */
const EXPECTED_TYPE: Record<MmdbKind, RegExp> = {
  city: /city/i,
  asn: /asn|isp/i,
  'anonymous-ip': /anonymous-ip/i,
  country: /country|city/i,
};

export interface MmdbDatabase<T extends object> {
  /** `database_type` from the metadata, e.g. `GeoLite2-City`. */
  type: string;
  buildDate: Date;
  ipVersion: 4 | 6;
  /** Networks the search tree holds (records that point at data; the format stores no count). */
  networks: number;
  /** The record for an address; `undefined` when this database cannot answer for it (IPv6 in an IPv4 tree). */
  lookup(ip: ParsedIp): T | null | undefined;
}

export class MmdbError extends Error {}

/** Addresses spread over the space, looked up on load: a corrupt tree or data section throws here, not on a request. */
const PROBES_V4 = Array.from({ length: 64 }, (_, i) => `${i * 4 + 1}.${(i * 37) & 255}.${(i * 91) & 255}.${i}`);
const PROBES_V6 = ['2001:4860:4860::8888', '2a00:1450::1', '2400:cb00::1', '2c0f:fb50::1', '2600::1', '2001:db8::1'];

const METADATA_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'); // \xab\xcd\xefMaxMind.com
const SEPARATOR = Buffer.alloc(16);

/**
 * Opens a database and checks that it is what it says: the expected `database_type`, metadata of
 * the right types, a search tree consistent with its `node_count` (walked whole, off the hot path:
 * see `walkTree`) that holds at least one network, and records that decode, at spread probe
 * addresses and at networks the walk found. An empty database is refused like an empty list: it
 * would answer "not listed" for every address.
 */
export async function openMmdb<T extends object>(buffer: Buffer, kind: MmdbKind): Promise<MmdbDatabase<T>> {
  // The schema is the caller's to name: the reader only decodes what the file holds.
  let reader: Reader<Response>;
  try {
    reader = new Reader<Response>(buffer, { cache: new RecordCache(4096) });
  } catch (error) {
    throw new MmdbError(`not a MaxMind DB file: ${(error as Error).message}`);
  }
  const meta = reader.metadata;
  if (typeof meta.databaseType !== 'string' || !EXPECTED_TYPE[kind].test(meta.databaseType)) {
    throw new MmdbError(`database type ${JSON.stringify(meta.databaseType)} is not a ${kind} database`);
  }
  if (meta.ipVersion !== 4 && meta.ipVersion !== 6) throw new MmdbError(`ip_version ${meta.ipVersion} is neither 4 nor 6`);
  const recordSize = meta.recordSize;
  if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) throw new MmdbError(`record_size ${recordSize} is not 24, 28 or 32`);
  if (Number.isNaN(meta.buildEpoch.getTime())) throw new MmdbError('build_epoch is not a time');
  if (!Number.isSafeInteger(meta.nodeCount) || meta.nodeCount < 1) throw new MmdbError(`node_count ${meta.nodeCount} is not a count of nodes`);
  const dataEnd = buffer.lastIndexOf(METADATA_MARKER);
  const dataStart = meta.searchTreeSize + SEPARATOR.length;
  if (dataStart > dataEnd) {
    throw new MmdbError(`truncated: ${meta.nodeCount} nodes need ${dataStart} bytes before the metadata, the file has ${dataEnd}`);
  }
  if (!buffer.subarray(meta.searchTreeSize, dataStart).equals(SEPARATOR)) {
    throw new MmdbError(`node_count ${meta.nodeCount} does not match the file: no data section separator where that many nodes end`);
  }
  let shape: TreeShape;
  try {
    shape = await walkTree(buffer, { nodeCount: meta.nodeCount, recordSize, ipVersion: meta.ipVersion, dataSectionSize: dataEnd - dataStart });
  } catch (error) {
    if (error instanceof TreeError) throw new MmdbError(`corrupt search tree: ${error.message}`);
    throw error;
  }
  if (shape.networks === 0) {
    throw new MmdbError('holds no networks: an empty database would answer "not listed" for every address (remove the file to turn the source off)');
  }
  const ipVersion = meta.ipVersion;
  for (const probe of [...(ipVersion === 6 ? [...PROBES_V4, ...PROBES_V6] : PROBES_V4), ...shape.samples]) {
    try {
      const record = reader.get(probe);
      if (record !== null && (typeof record !== 'object' || Array.isArray(record))) throw new Error('the record is not a map');
    } catch (error) {
      throw new MmdbError(`corrupt: look-up of ${probe} failed: ${(error as Error).message}`);
    }
  }
  return {
    type: meta.databaseType,
    buildDate: meta.buildEpoch,
    ipVersion,
    networks: shape.networks,
    lookup: (ip) => (ip.version === 6 && ipVersion === 4 ? undefined : (reader.get(ip.address) as T | null)),
  };
}

/**
 * Decoded records by data-section offset. Many networks share one record (a country database has
 * some 250), so decoding each once makes look-ups several times faster. Bounded: when full it
 * starts over, which costs a few re-decodes and needs no bookkeeping on the hot path.
 * Records are shared between look-ups, so callers must not mutate them (we only read).
 */
class RecordCache {
  private readonly records = new Map<string | number, unknown>();
  constructor(private readonly max: number) {}
  get(key: string | number): unknown {
    return this.records.get(key);
  }
  set(key: string | number, value: unknown): void {
    if (this.records.size >= this.max) this.records.clear();
    this.records.set(key, value);
  }
}

export async function loadMmdb<T extends object>(path: string, kind: MmdbKind): Promise<MmdbDatabase<T>> {
  return openMmdb<T>((await readBounded(path, FILE_CAPS.mmdb)).bytes, kind);
}
