import { startDnsServer, type Zone } from '../test/support/dns-server.js';

/**
 * The benchmark's DNS server, in its own process so that its work does not count against the
 * client's throughput or event-loop delay. Listens on 127.0.0.1 only; configured over IPC.
 */
const { zone, latencyMinMs, latencyMaxMs } = await new Promise<{ zone: Zone; latencyMinMs: number; latencyMaxMs: number }>((resolve) =>
  process.once('message', resolve),
);
const server = await startDnsServer({
  zone,
  latencyMs: () => latencyMinMs + Math.random() * (latencyMaxMs - latencyMinMs),
});
process.send!({ port: server.port });
process.on('message', (message) => {
  if (message === 'close') void server.close().then(() => process.exit(0));
  // How many queries each name received: the benchmark checks one cold look-up costs one round trip.
  if (message === 'stats') process.send!({ queries: server.queries.map((q) => q.name) });
});
