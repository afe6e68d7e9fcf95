import { connect } from 'node:net';
import type { DnsServer } from '../config.js';
import { DnsFailure } from './failure.js';
import { queryLife } from './settle.js';
import { answersQuery, decodeReply, type DecodedPacket, type Query } from './message.js';

/** Largest DNS message: the TCP length prefix is 16 bits (RFC 1035 §4.2.2). */
const MAX_MESSAGE = 65_535;

/**
 * One query over TCP, used when the UDP reply came back truncated (RFC 7766 §5). Messages carry a
 * two-byte length prefix; on a connection we opened ourselves a reply that does not decode or
 * does not match is an error, not a stray.
 */
export function queryTcp(server: DnsServer, query: Query, timeoutMs: number, signal: AbortSignal): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.host, port: server.port });
    let buffered = Buffer.alloc(0);
    const where = `${server.host}:${server.port} over TCP`;
    const { finish, settled } = queryLife({ signal, timeoutMs, where, release: () => socket.destroy() }, resolve, reject);
    if (settled) return;

    socket.on('error', (error) => finish(new DnsFailure('network', `${where}: ${error.message}`)));
    socket.on('close', () => finish(new DnsFailure('network', `${where}: closed before a full reply`)));
    socket.on('connect', () => {
      const prefix = Buffer.alloc(2);
      prefix.writeUInt16BE(query.bytes.length);
      socket.write(Buffer.concat([prefix, query.bytes]));
    });
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2) return;
      const length = buffered.readUInt16BE(0);
      if (buffered.length - 2 > MAX_MESSAGE) return finish(new DnsFailure('malformed', where));
      if (buffered.length < 2 + length) return;
      const reply = decodeReply(buffered.subarray(2, 2 + length));
      if (reply === null || !answersQuery(reply, query)) finish(new DnsFailure('malformed', `${where}: reply does not answer the query`));
      else finish(null, reply);
    });
  });
}
