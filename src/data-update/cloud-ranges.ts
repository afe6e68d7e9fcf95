/**
 * The public IP ranges the big clouds publish, each in its own format, read down to a list of CIDRs.
 * A reader throws when the document is not in the format it expects (so the source fails, rather
 * than writing an empty list).
 */
export type RangeFormat = 'aws' | 'google' | 'azure' | 'oracle' | 'digitalocean' | 'text';

type Json = Record<string, unknown>;

const array = (value: unknown, what: string): unknown[] => {
  if (!Array.isArray(value)) throw new Error(`expected ${what} to be an array`);
  return value;
};
const strings = (items: unknown[]): string[] => items.filter((x): x is string => typeof x === 'string');

const READERS: Record<RangeFormat, (body: string) => string[]> = {
  // https://docs.aws.amazon.com/vpc/latest/userguide/aws-ip-ranges.html
  aws: (body) => {
    const doc = JSON.parse(body) as Json;
    return [
      ...strings(array(doc.prefixes, 'prefixes').map((p) => (p as Json).ip_prefix)),
      ...strings(array(doc.ipv6_prefixes ?? [], 'ipv6_prefixes').map((p) => (p as Json).ipv6_prefix)),
    ];
  },
  // https://support.google.com/a/answer/10026322 (cloud.json)
  google: (body) => {
    const doc = JSON.parse(body) as Json;
    return strings(array(doc.prefixes, 'prefixes').flatMap((p) => [(p as Json).ipv4Prefix, (p as Json).ipv6Prefix]));
  },
  // https://learn.microsoft.com/azure/virtual-network/service-tags-overview#discover-service-tags-by-using-downloadable-json-files
  azure: (body) => {
    const doc = JSON.parse(body) as Json;
    return strings(array(doc.values, 'values').flatMap((v) => array(((v as Json).properties as Json)?.addressPrefixes ?? [], 'addressPrefixes')));
  },
  // https://docs.oracle.com/iaas/Content/General/Concepts/addressranges.htm
  oracle: (body) => {
    const doc = JSON.parse(body) as Json;
    return strings(array(doc.regions, 'regions').flatMap((r) => array((r as Json).cidrs, 'cidrs').map((c) => (c as Json).cidr)));
  },
  // https://docs.digitalocean.com/platform/ (geo feed, RFC 8805: `prefix,country,region,city,postal`)
  digitalocean: (body) => lines(body).map((l) => l.split(',')[0]!.trim()),
  // One CIDR per line (Cloudflare's ips-v4 / ips-v6)
  text: (body) => lines(body),
};

function lines(body: string): string[] {
  return body.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter((l) => l !== '');
}

export function readRanges(format: RangeFormat, body: string): string[] {
  return READERS[format](body);
}

/**
 * Azure publishes its ranges under a new URL every week, linked from a download page. Given the
 * page, find the JSON link; given the JSON itself, use it.
 */
export function azureJsonLink(page: string): string | null {
  const m = /https?:\/\/[^"'\s<>]+\/ServiceTags_Public_\d+\.json/.exec(page);
  return m ? m[0] : null;
}
