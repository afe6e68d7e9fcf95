import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A full-size data set, generated (deterministically) so the benchmark needs no download:
 * 100,000 data-center ranges, 10,000 proxies, 1,500 Tor exits, IPv4 and IPv6.
 */
export function writeDataSet(dir: string): Record<string, number> {
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  const ipv4 = () => `${11 + (random() % 200)}.${random() % 256}.${random() % 256}.${random() % 256}`;
  const lines = (count: number, make: () => string) => Array.from({ length: count }, make).join('\n') + '\n';

  const datacenter = 100_000;
  writeFileSync(
    join(dir, 'datacenter-ranges.txt'),
    '# generated for the benchmark\n' +
      lines(datacenter * 0.9, () => `${ipv4().replace(/\.\d+$/, '.0')}/24`) +
      lines(datacenter * 0.1, () => `2a0${random() % 10}:${(random() % 0xffff).toString(16)}:${(random() % 0xffff).toString(16)}::/48`),
  );
  const proxies = 10_000;
  writeFileSync(join(dir, 'proxy-list.txt'), lines(proxies, ipv4));
  const tor = 1_500;
  writeFileSync(join(dir, 'tor-exit-nodes.txt'), lines(tor, ipv4));
  return { datacenter_ranges: datacenter, proxies, tor_exits: tor };
}
