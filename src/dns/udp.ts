import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import type { DnsServer } from '../config.js';
import { DnsFailure } from './failure.js';
import { afterPendingIo } from './timeout.js';
import { answersQuery, decodeReply, type DecodedPacket, type Query } from './message.js';

/**
 * One query over UDP on a fresh socket (a new random source port per query, RFC 5452 §9.2).
 * The socket is connected, so the kernel drops datagrams from any other address and a closed
 * port surfaces as ECONNREFUSED instead of a silent timeout. Datagrams that do not decode or do
 * not answer our question are ignored and the wait goes on: a forged reply must not end it.
 */
export function queryUdp(server: DnsServer, query: Query, timeoutMs: number, signal: AbortSignal): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
    let done = false;
    const finish = (error: DnsFailure | null, reply?: DecodedPacket): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.close();
      if (error) reject(error);
      else resolve(reply!);
    };
    const onAbort = (): void => finish(new DnsFailure('aborted'));
    const timer = setTimeout(() => afterPendingIo(() => finish(new DnsFailure('timeout', `${server.host}:${server.port} over UDP`))), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) return onAbort();

    socket.on('error', (error) => finish(new DnsFailure('network', `${server.host}:${server.port}: ${error.message}`)));
    socket.on('message', (bytes, from) => {
      if (from.port !== server.port) return;
      const reply = decodeReply(bytes);
      if (reply !== null && answersQuery(reply, query)) finish(null, reply);
    });
    socket.connect(server.port, server.host, () => {
      socket.send(query.bytes, (error) => {
        if (error) finish(new DnsFailure('network', `${server.host}:${server.port}: ${error.message}`));
      });
    });
  });
}
