const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The most bytes the service reads from each kind of file (docs/data.md, docs/rules.md). A file
 * over its cap is refused like a malformed one: the last good copy keeps serving. Each cap is
 * several times the largest real file of its kind. The lists and the ASN CSVs are built in a
 * worker thread (worker.ts), so their caps bound memory and reload time, not the event loop; a
 * rule file's YAML document is still parsed on it, so its cap keeps that short. bench/files.ts
 * measures a file at each cap.
 */
export const FILE_CAPS = {
  /** The shipped rule files are under 1 KiB; 32 KiB holds some 250 rules. */
  ruleFile: 32 * KiB,
  /** About 3,000 accounts with two keys each. */
  accountsFile: 1 * MiB,
  /** Tor, proxy and datacenter lists: ~450,000 IPv4 networks; the public cloud ranges are ~2 MiB. */
  addressList: 8 * MiB,
  /** The operator's e-mail domain lists: ~200,000 domains, more than all the bundled lists hold. */
  domainList: 4 * MiB,
  /** MaxMind databases, read whole: GeoIP2-City is ~120 MiB. */
  mmdb: 256 * MiB,
  /** The bundled ASN CSVs (read at start, and when a MaxMind ASN database goes away): 21 and 9 MiB. */
  asnCsv: 64 * MiB,
  /** A bundled package's package.json. */
  packageManifest: 1 * MiB,
} as const;
