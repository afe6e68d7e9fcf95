import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';

let dns: TestDnsServer | undefined;
afterEach(async () => {
  await dns?.close();
  dns = undefined;
});

it('regression: running out of file descriptors is not held against the DNS server', async () => {
  // EMFILE used to count as a failure of the server: a process short of descriptors benched a
  // healthy resolver for everyone, and kept it benched after the descriptors came back. The
  // resolver runs in a child process with a low descriptor limit (a real EMFILE, nothing faked).
  dns = await startDnsServer({ zone: { 'mail.test': { MX: [{ exchange: 'mx.mail.test', priority: 10 }] }, 'web.test': { A: ['192.0.2.1'] } } });
  const child = spawn('/bin/sh', ['-c', 'ulimit -n 256 && exec "$0" --import tsx test/dns/fd-exhaustion.child.ts "$1"', process.execPath, String(dns.port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (err += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  expect({ code, err }).toEqual({ code: 0, err: '' });
  const seen = JSON.parse(out) as { held: number; before: string; starved: string[]; backingOff: boolean; after: string };
  expect(seen.held).toBeGreaterThan(0);
  expect(seen).toMatchObject({ before: 'records', starved: Array(10).fill('local'), backingOff: false, after: 'records' });
});
