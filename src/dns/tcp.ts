import { connect } from 'node:net';
import type { DnsServer } from '../config/config.js';
import { DnsFailure, socketFailure } from './failure.js';
import { queryLife } from './settle.js';
import { answersQuery, decodeReply, type DecodedPacket, type Query } from './message.js';

/**
 * One query over TCP, used when the UDP reply came back truncated (RFC 7766 §5). Messages carry a
 * two-byte length prefix; on a connection we opened ourselves a reply that does not decode or
 * does not match is an error, not a stray.
 */
export function queryTcp(server: DnsServer, query: Query, timeoutMs: number, signal: AbortSignal): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.host, port: server.port });
    // The length prefix, then the message in one buffer of the announced size: no re-copying per chunk.
    const announced = Buffer.alloc(2);
    let message: Buffer | null = null;
    let received = 0;
    const where = `${server.host}:${server.port} over TCP`;
    const { finish, settled } = queryLife({ signal, timeoutMs, where, release: () => socket.destroy() }, resolve, reject);
    if (settled) return;

    socket.on('error', (error) => finish(socketFailure(error, where)));
    socket.on('close', () => finish(new DnsFailure('network', `${where}: closed before a full reply`)));
    socket.on('connect', () => {
      const prefix = Buffer.alloc(2);
      prefix.writeUInt16BE(query.bytes.length);
      socket.write(Buffer.concat([prefix, query.bytes]));
    });
    socket.on('data', (chunk: Buffer) => {
      let at = 0;
      while (received < 2 && at < chunk.length) announced[received++] = chunk[at++]!;
      if (received < 2) return;
      // At most 65,535 bytes: the prefix has 16 bits. Anything after the message is not ours.
      message ??= Buffer.allocUnsafe(announced.readUInt16BE(0));
      received += chunk.copy(message, received - 2, at);
      if (received - 2 < message.length) return;
      const reply = decodeReply(message);
      if (reply === null || !answersQuery(reply, query)) finish(new DnsFailure('malformed', `${where}: reply does not answer the query`));
      else finish(null, reply);
    });
  });
}
