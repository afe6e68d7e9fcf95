/**
 * Run by fd-exhaustion.test.ts under a low `ulimit -n`: takes every file descriptor left, looks
 * names up while none is free, gives them back, and looks up once more. Prints what it saw as JSON.
 */
import { closeSync, openSync } from 'node:fs';
import { createResolver } from '../../src/dns/resolver.js';

const port = Number(process.argv[2]);
// One strike would be enough to bench the server: the shortage must not count as one.
const resolver = createResolver({ servers: [{ host: '127.0.0.1', port }], timeoutMs: 2_000, backoff: { threshold: 1, initialMs: 60_000 } });
const before = await resolver.lookup('mail.test', 'MX');

const held: number[] = [];
try {
  for (;;) held.push(openSync('/dev/null', 'r'));
} catch (error) {
  if ((error as NodeJS.ErrnoException).code !== 'EMFILE') throw error;
}
const starved = await Promise.all(Array.from({ length: 10 }, (_, i) => resolver.lookup(`n${i}.test`, 'MX')));
const backingOff = resolver.backingOff;
for (const fd of held) closeSync(fd);
const after = await resolver.lookup('web.test', 'A');

const summary = (r: Awaited<ReturnType<typeof resolver.lookup>>) => (r.kind === 'failure' ? r.reason : r.kind);
process.stdout.write(JSON.stringify({ held: held.length, before: summary(before), starved: starved.map(summary), backingOff, after: summary(after) }));
