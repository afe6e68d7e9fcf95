import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Packet } from 'dns-packet';

/**
 * A real DNS server on 127.0.0.1, UDP and TCP on the same port, answering from an in-memory zone
 * as a recursive resolver would (CNAME chains included in the answer). Names can be given a fault
 * to exercise a client's failure handling. Delays use `setTimeout`, so tests drive them with fake
 * timers instead of waiting.
 */

export interface ZoneEntry {
  MX?: Array<{ exchange: string; priority: number }>;
  /**
   * A hostile MX answer: as many MX records as fit in one 64 KB TCP message, each exchange a
   * distinct name of about 245 characters, written with name compression (about 22 bytes a
   * record, some 2,900 records). Over UDP it comes back truncated, as from any server.
   */
  hugeMx?: true;
  A?: string[];
  AAAA?: string[];
  CNAME?: string;
  /** Seconds; 300 unless given. */
  ttl?: number;
}

/**
 * Lower-case names without the trailing dot. A name not in the zone is NXDOMAIN, unless a wildcard
 * covers it: `*.example` answers for every name under `example` that has no entry of its own, and
 * `*` for every name (RFC 4592, simplified: the closest `*.` parent wins).
 */
export type Zone = Record<string, ZoneEntry>;

export type Fault =
  /** No reply at all. */
  | { kind: 'drop' }
  | { kind: 'servfail' }
  | { kind: 'refused' }
  /** A reply whose ID is not the query's (and nothing else). */
  | { kind: 'wrong-id' }
  /** A reply echoing a different question (and nothing else). */
  | { kind: 'wrong-question' }
  /** A forged NXDOMAIN with a wrong ID, then the real answer: a client must skip the first. */
  | { kind: 'spoof-then-answer' }
  /** Over UDP an empty reply with the TC bit; over TCP the full answer (`pieces`: written a few bytes at a time). */
  | { kind: 'truncate'; pieces?: true }
  /** Random bytes that are not a DNS message. */
  | { kind: 'garbage' }
  /** The right answer, `ms` later. */
  | { kind: 'delay'; ms: number };

export interface ReceivedQuery {
  name: string;
  type: string;
  transport: 'udp' | 'tcp';
}

export interface DnsServerOptions {
  zone: Zone;
  /**
   * Keyed by lower-case name (every record type) or `name/TYPE` (that type only, e.g. `x.test/A`);
   * wildcards as in the zone (`*.dead.example`, or `*` for the whole server).
   */
  faults?: Record<string, Fault>;
  /** SOA sent with negative answers: min(ttl, minimum) is the negative TTL (RFC 2308). */
  soa?: { ttl: number; minimum: number };
  /** When false, CNAME targets are left for the client to ask about. */
  chaseCnames?: boolean;
  /** Added before every reply (ms), e.g. to model a resolver's round trip in benchmarks. */
  latencyMs?: () => number;
  /** Ports to try before ephemeral ones; for testing the bind retry. */
  tryPortsFirst?: number[];
  /** This port rather than a free one: to bring a server that was closed back where clients look for it. */
  port?: number;
}

export interface TestDnsServer {
  host: '127.0.0.1';
  port: number;
  /** `{ host, port }` as the resolver's config takes it. */
  address: { host: string; port: number };
  queries: ReceivedQuery[];
  setFault(name: string, fault: Fault | null): void;
  setZone(name: string, entry: ZoneEntry | null): void;
  /** Resolves once `count` queries in total have arrived (real I/O, so tests need no sleeps). */
  waitForQueries(count: number): Promise<void>;
  close(): Promise<void>;
}

const HOST = '127.0.0.1';

export async function startDnsServer(options: DnsServerOptions): Promise<TestDnsServer> {
  const zone = new Map(Object.entries(options.zone).map(([name, entry]) => [lower(name), entry]));
  const faults = new Map(Object.entries(options.faults ?? {}).map(([name, fault]) => [faultKey(name), fault]));
  const soa = options.soa ?? { ttl: 300, minimum: 60 };
  const chase = options.chaseCnames ?? true;
  const queries: ReceivedQuery[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const timers = new Set<NodeJS.Timeout>();

  const faultFor = (name: string, type: string): Fault | undefined => {
    for (const candidate of wildcards(name)) {
      const fault = faults.get(`${candidate}/${type}`) ?? faults.get(candidate);
      if (fault !== undefined) return fault;
    }
    return undefined;
  };

  const record = (query: ReceivedQuery): void => {
    queries.push(query);
    for (const w of waiters.filter((w) => queries.length >= w.count)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };

  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };

  /** The replies to send for one query, in order. */
  const respond = (query: DecodedPacket, transport: 'udp' | 'tcp'): Buffer[] => {
    const question = query.questions?.[0];
    if (question === undefined) return [];
    const name = lower(question.name);
    record({ name, type: question.type, transport });
    const fault = faultFor(name, question.type);
    const answer = (): Buffer => {
      const entry = inZone(zone, name);
      const bytes = entry?.hugeMx && question.type === 'MX' ? hugeMxReply(query) : dnsPacket.encode(answerFor(query, zone, soa, chase));
      // Over UDP, a reply larger than the client said it can take comes back truncated (RFC 6891 §7).
      return transport === 'udp' && bytes.length > udpLimit(query) ? dnsPacket.encode(reply(query, { truncated: true })) : bytes;
    };
    switch (fault?.kind) {
      case 'drop':
        return [];
      case 'delay':
        return [answer()];
      case 'servfail':
      case 'refused':
        return [dnsPacket.encode(reply(query, { rcode: fault.kind === 'servfail' ? 2 : 5 }))];
      case 'wrong-id':
        return [dnsPacket.encode({ ...reply(query, {}), id: ((query.id ?? 0) + 1) % 65_536 })];
      case 'wrong-question':
        return [dnsPacket.encode({ ...reply(query, {}), questions: [{ ...question, name: `other.${name}` }] })];
      case 'spoof-then-answer':
        // The forgery says NXDOMAIN, so a client that took it would visibly give the wrong answer.
        return [dnsPacket.encode({ ...reply(query, { rcode: 3 }), id: ((query.id ?? 0) + 7) % 65_536 }), answer()];
      case 'truncate':
        return [transport === 'udp' ? dnsPacket.encode(reply(query, { truncated: true })) : answer()];
      case 'garbage':
        return [randomBytes(29)];
      default:
        return [answer()];
    }
  };

  const delayOf = (query: DecodedPacket): number | null => {
    const question = query.questions?.[0];
    const fault = question && faultFor(lower(question.name), question.type);
    if (fault?.kind === 'delay') return fault.ms;
    return options.latencyMs?.() ?? null;
  };

  const sockets = new Set<Socket>();
  const tcp = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const length = buffered.readUInt16BE(0);
        const query = safeDecode(buffered.subarray(2, 2 + length));
        buffered = buffered.subarray(2 + length);
        if (query === null) continue;
        const fault = faultFor(lower(query.questions?.[0]?.name ?? ''), query.questions?.[0]?.type ?? '');
        const send = (replies: Buffer[]): void => {
          for (const r of replies) {
            if (fault?.kind === 'truncate' && fault.pieces) writeInPieces(socket, frame(r));
            else if (!socket.destroyed) socket.write(frame(r));
          }
        };
        const replies = respond(query, 'tcp');
        const delay = delayOf(query);
        if (delay === null) send(replies);
        else later(delay, () => send(replies));
      }
    });
  });

  // A server that answers only over TCP would leave every UDP query unanswered: the handlers go on
  // the socket that bindBoth returns, which is not the first one it tried when it had to retry.
  const { udp, port } = await bindBoth(tcp, options.port !== undefined ? [options.port] : (options.tryPortsFirst ?? []), options.port !== undefined);
  udp.on('message', (bytes: Buffer, from: RemoteInfo) => {
    const query = safeDecode(bytes);
    if (query === null) return;
    const send = (replies: Buffer[]): void => {
      for (const r of replies) udp.send(r, from.port, from.address);
    };
    const replies = respond(query, 'udp');
    const delay = delayOf(query);
    if (delay === null) send(replies);
    else later(delay, () => send(replies));
  });

  return {
    host: HOST,
    port,
    address: { host: HOST, port },
    queries,
    setFault(name, fault) {
      const key = faultKey(name);
      if (fault === null) faults.delete(key);
      else faults.set(key, fault);
    },
    setZone(name, entry) {
      if (entry === null) zone.delete(lower(name));
      else zone.set(lower(name), entry);
    },
    waitForQueries(count) {
      if (queries.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}

/**
 * UDP and TCP on one port number, as resolvers expect. UDP first on an ephemeral port, then TCP on
 * the same number; that number can be taken for TCP (typically by a TIME_WAIT left by an earlier
 * TCP query), so on EADDRINUSE both are given up and a fresh pair is tried. Returns the UDP socket
 * actually bound: the caller must attach its handlers to that one, not to one it made itself.
 * With `onlyThose`, a server that must come back on a given port fails rather than move.
 */
async function bindBoth(tcp: Server, tryPortsFirst: number[], onlyThose = false): Promise<{ udp: UdpSocket; port: number }> {
  const candidates = [...tryPortsFirst];
  for (let tries = 0; tries < 20 + tryPortsFirst.length; tries += 1) {
    const wanted = candidates.shift() ?? (onlyThose ? undefined : 0);
    if (wanted === undefined) throw new Error(`could not bind UDP and TCP on port ${tryPortsFirst.join(', ')}`);
    const udp = createSocket('udp4');
    const bound = await whenListening(udp, () => udp.bind(wanted, HOST));
    if (!bound) {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      continue;
    }
    const port = udp.address().port;
    if (await whenListening(tcp, () => tcp.listen(port, HOST))) return { udp, port };
    await new Promise<void>((resolve) => udp.close(() => resolve()));
  }
  throw new Error('could not bind UDP and TCP on one port');
}

/**
 * Runs `start` and resolves true once listening, false on EADDRINUSE; leaves no listener behind
 * either way (a failed listen must not fire a stale callback on a later successful one).
 */
function whenListening(emitter: UdpSocket | Server, start: () => void): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const onListening = (): void => {
      emitter.off('error', onError);
      resolve(true);
    };
    const onError = (error: NodeJS.ErrnoException): void => {
      emitter.off('listening', onListening);
      if (error.code === 'EADDRINUSE') resolve(false);
      else reject(error);
    };
    emitter.once('listening', onListening);
    emitter.once('error', onError);
    start();
  });
}

/** A port with nothing listening on it: for the "closed port" case. */
export async function closedPort(): Promise<{ host: string; port: number }> {
  const probe = createSocket('udp4');
  await new Promise<void>((resolve) => probe.bind(0, HOST, () => resolve()));
  const port = probe.address().port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return { host: HOST, port };
}

/** The name itself, then the wildcards that could cover it, closest first. */
function wildcards(name: string): string[] {
  const labels = name === '' ? [] : name.split('.');
  return [name, ...labels.slice(1).map((_, i) => `*.${labels.slice(i + 1).join('.')}`), '*'];
}

function inZone(zone: Map<string, ZoneEntry>, name: string): ZoneEntry | undefined {
  for (const candidate of wildcards(name)) {
    const entry = zone.get(candidate);
    if (entry !== undefined) return entry;
  }
  return undefined;
}

/** The client's EDNS0 UDP payload size, or 512 without EDNS0 (RFC 1035 §4.2.1). */
function udpLimit(query: DecodedPacket): number {
  const opt = (query.additionals ?? []).find((a) => a.type === 'OPT');
  return opt !== undefined && 'udpPayloadSize' in opt ? Math.max(512, opt.udpPayloadSize ?? 512) : 512;
}

/**
 * An MX answer as large as one TCP message allows, written by hand because dns-packet does not
 * compress names. Record i's exchange is one short label of its own followed by a pointer to a
 * long suffix written once (long labels and the question's name), so each record costs about 22
 * bytes on the wire and decodes to a distinct name of about 245 characters.
 * Preferences run downwards, so the most preferred records come last on the wire.
 */
function hugeMxReply(query: DecodedPacket): Buffer {
  const qname = encodeName(query.questions![0]!.name);
  const message = Buffer.alloc(65_535);
  message.writeUInt16BE(query.id ?? 0, 0);
  message.writeUInt16BE(0x8000 | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE, 2);
  message.writeUInt16BE(1, 4); // QDCOUNT
  const QNAME_AT = 12;
  let at = QNAME_AT + qname.copy(message, QNAME_AT);
  at = message.writeUInt32BE(0x000f_0001, at); // QTYPE MX, QCLASS IN
  // Long labels between each record's own label and the question's name: about 245 characters in all.
  const suffix: string[] = [];
  for (let room = 245 - qname.length - 6; room > 1; room -= 64) suffix.push('abcd'[suffix.length]!.repeat(Math.min(63, room - 1)));
  let suffixAt = -1;
  let count = 0;
  for (;; count += 1) {
    const own = `m${count.toString(36)}`;
    const tailLength = suffixAt < 0 ? suffix.reduce((n, l) => n + 1 + l.length, 0) + 2 : 2;
    const rdataLength = 2 + 1 + own.length + tailLength;
    if (at + 12 + rdataLength > message.length) break;
    at = message.writeUInt16BE(0xc000 | QNAME_AT, at); // owner: the question's name
    at = message.writeUInt32BE(0x000f_0001, at); // MX, IN
    at = message.writeUInt32BE(300, at); // TTL
    at = message.writeUInt16BE(rdataLength, at);
    at = message.writeUInt16BE(65_535 - (count % 65_535), at); // preference
    at = message.writeUInt8(own.length, at);
    at += message.write(own, at, 'latin1');
    if (suffixAt < 0) {
      suffixAt = at;
      for (const label of suffix) {
        at = message.writeUInt8(label.length, at);
        at += message.write(label, at, 'latin1');
      }
      at = message.writeUInt16BE(0xc000 | QNAME_AT, at);
    } else {
      at = message.writeUInt16BE(0xc000 | suffixAt, at);
    }
  }
  message.writeUInt16BE(count, 6); // ANCOUNT
  return message.subarray(0, at);
}

function encodeName(name: string): Buffer {
  const labels = lower(name).split('.').filter((l) => l !== '');
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
}

function answerFor(query: DecodedPacket, zone: Map<string, ZoneEntry>, soa: { ttl: number; minimum: number }, chase: boolean): Packet {
  const question = query.questions![0]!;
  const answers: Answer[] = [];
  let name = lower(question.name);
  for (let hop = 0; hop < 16; hop += 1) {
    const entry = inZone(zone, name);
    if (entry === undefined) {
      return reply(query, { rcode: 3, answers, authorities: [soaRecord(name, soa)] });
    }
    const ttl = entry.ttl ?? 300;
    if (entry.CNAME !== undefined) {
      answers.push({ type: 'CNAME', name, ttl, data: entry.CNAME });
      if (!chase) return reply(query, { answers });
      name = lower(entry.CNAME);
      continue;
    }
    const records = recordsOf(name, entry, question.type, ttl);
    if (records.length === 0) return reply(query, { answers, authorities: [soaRecord(name, soa)] });
    return reply(query, { answers: [...answers, ...records] });
  }
  return reply(query, { rcode: 2 });
}

function recordsOf(name: string, entry: ZoneEntry, type: string, ttl: number): Answer[] {
  if (type === 'MX') return (entry.MX ?? []).map((mx) => ({ type: 'MX', name, ttl, data: { preference: mx.priority, exchange: mx.exchange } }));
  if (type === 'A') return (entry.A ?? []).map((ip) => ({ type: 'A', name, ttl, data: ip }));
  if (type === 'AAAA') return (entry.AAAA ?? []).map((ip) => ({ type: 'AAAA', name, ttl, data: ip }));
  return [];
}

function soaRecord(name: string, soa: { ttl: number; minimum: number }): Answer {
  const apex = name.split('.').slice(-2).join('.');
  return {
    type: 'SOA',
    name: apex,
    ttl: soa.ttl,
    data: { mname: `ns.${apex}`, rname: `hostmaster.${apex}`, serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: soa.minimum },
  };
}

interface ReplyParts {
  rcode?: number;
  truncated?: boolean;
  answers?: Answer[];
  authorities?: Answer[];
}

function reply(query: DecodedPacket, parts: ReplyParts): Packet {
  // dns-packet takes the RCODE in the low four bits of `flags`.
  const flags = dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (parts.truncated ? dnsPacket.TRUNCATED_RESPONSE : 0) | (parts.rcode ?? 0);
  return {
    type: 'response',
    id: query.id ?? 0,
    flags,
    questions: query.questions ?? [],
    answers: parts.answers ?? [],
    authorities: parts.authorities ?? [],
  };
}

/** One byte, then seven at a time, each write in its own turn of the event loop: the client sees many chunks. */
function writeInPieces(socket: Socket, bytes: Buffer): void {
  socket.setNoDelay(true);
  const next = (at: number): void => {
    if (at >= bytes.length || socket.destroyed) return;
    const size = at === 0 ? 1 : 7;
    socket.write(bytes.subarray(at, at + size));
    setImmediate(() => next(at + size));
  };
  next(0);
}

function frame(message: Buffer): Buffer {
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(message.length);
  return Buffer.concat([prefix, message]);
}

function safeDecode(bytes: Buffer): DecodedPacket | null {
  try {
    return dnsPacket.decode(bytes);
  } catch {
    return null;
  }
}

function faultKey(key: string): string {
  const [name, type] = key.split('/');
  return type === undefined ? lower(name!) : `${lower(name!)}/${type.toUpperCase()}`;
}

function lower(name: string): string {
  const l = name.toLowerCase();
  return l.endsWith('.') ? l.slice(0, -1) : l;
}
