import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createResolver } from '../../src/dns/resolver.js';
import { startDnsServer } from './dns-server.js';

describe('the test DNS server', () => {
  // Its UDP port number can be held for TCP (a TIME_WAIT from an earlier TCP query); the retry
  // once left the UDP handlers on the socket it had given up, so no UDP query was ever answered.
  it('answers over UDP and TCP when the first port it tried was taken for TCP', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as AddressInfo).port;
    try {
      const dns = await startDnsServer({
        zone: { 'mail.test': { MX: [{ exchange: 'mx.mail.test', priority: 10 }] }, 'big.test': { MX: [{ exchange: 'mx.big.test', priority: 10 }] } },
        faults: { 'big.test': { kind: 'truncate' } },
        tryPortsFirst: [taken],
      });
      expect(dns.port).not.toBe(taken);
      const resolver = createResolver({ servers: [dns.address], timeoutMs: 5_000, attemptsPerServer: 1 });
      expect(await resolver.lookup('mail.test', 'MX')).toMatchObject({ kind: 'records' });
      expect(await resolver.lookup('big.test', 'MX')).toMatchObject({ kind: 'records' });
      expect(dns.queries.map((q) => `${q.name} ${q.transport}`)).toEqual(['mail.test udp', 'big.test udp', 'big.test tcp']);
      await dns.close();
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
