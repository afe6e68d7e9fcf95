const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The most bytes the service reads from each kind of file (docs/data.md, docs/rules.md). A file
 * over its cap is refused like a malformed one: the last good copy keeps serving. Each cap is
 * several times the largest real file of its kind, and small enough that what is read is parsed
 * without stalling requests.
 */
export const FILE_CAPS = {
  /** The shipped rule files are under 1 KiB; 64 KiB holds some 500 rules. YAML parses at ~1 ms per KiB. */
  ruleFile: 64 * KiB,
  /** About 3,000 accounts with two keys each. */
  accountsFile: 1 * MiB,
  /** Tor, proxy and datacenter lists: ~800,000 IPv4 networks; the public cloud ranges are ~2 MiB. */
  addressList: 16 * MiB,
  /** The operator's e-mail domain lists; the biggest bundled list is ~3 MiB. */
  domainList: 32 * MiB,
  /** MaxMind databases, read whole: GeoIP2-City is ~120 MiB. */
  mmdb: 256 * MiB,
  /** The bundled ASN CSVs (read at start only): 21 and 9 MiB. */
  asnCsv: 64 * MiB,
  /** A bundled package's package.json. */
  packageManifest: 1 * MiB,
} as const;
