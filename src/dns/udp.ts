import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import type { DnsServer } from '../config/config.js';
import { socketFailure } from './failure.js';
import { queryLife } from './settle.js';
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
    const where = `${server.host}:${server.port} over UDP`;
    const { finish, settled } = queryLife({ signal, timeoutMs, where, release: () => socket.close() }, resolve, reject);
    if (settled) return;

    socket.on('error', (error) => finish(socketFailure(error, where)));
    socket.on('message', (bytes, from) => {
      if (from.port !== server.port) return;
      const reply = decodeReply(bytes);
      if (reply !== null && answersQuery(reply, query)) finish(null, reply);
    });
    socket.connect(server.port, server.host, () => {
      socket.send(query.bytes, (error) => {
        if (error) finish(socketFailure(error, where));
      });
    });
  });
}
