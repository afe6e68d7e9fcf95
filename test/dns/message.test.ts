import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { readOutcome } from '../../src/dns/answer.js';
import { answersQuery, buildQuery, decodeReply, MAX_RECORDS_READ } from '../../src/dns/message.js';

const replyTo = (query: ReturnType<typeof buildQuery>, overrides: Record<string, unknown> = {}) =>
  decodeReply(
    dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.RECURSION_AVAILABLE,
      questions: [{ type: query.type, name: query.name, class: 'IN' }],
      ...overrides,
    }),
  )!;

describe('buildQuery', () => {
  it('asks one recursive question with a random ID and EDNS0', () => {
    const ids = new Set(Array.from({ length: 50 }, () => buildQuery('example.test', 'MX').id));
    expect(ids.size).toBeGreaterThan(40);
    const decoded = decodeReply(buildQuery('example.test', 'MX').bytes)!;
    expect(decoded.flag_rd).toBe(true);
    expect(decoded.questions).toEqual([{ type: 'MX', name: 'example.test', class: 'IN' }]);
    expect(decoded.additionals?.[0]?.type).toBe('OPT');
  });
});

describe('answersQuery', () => {
  const query = buildQuery('Example.test', 'MX');

  it('accepts the matching reply, names compared without case (RFC 4343)', () => {
    expect(answersQuery(replyTo(query, { questions: [{ type: 'MX', name: 'EXAMPLE.TEST', class: 'IN' }] }), query)).toBe(true);
  });

  it.each([
    ['another ID', { id: (query.id + 1) % 65_536 }],
    ['another name', { questions: [{ type: 'MX', name: 'other.test', class: 'IN' }] }],
    ['another type', { questions: [{ type: 'A', name: 'example.test', class: 'IN' }] }],
    ['another class', { questions: [{ type: 'MX', name: 'example.test', class: 'CH' }] }],
    ['no question', { questions: [] }],
    ['a query, not a response', { type: 'query' }],
  ])('refuses a reply with %s', (_label, overrides) => {
    expect(answersQuery(replyTo(query, overrides), query)).toBe(false);
  });

  it('treats bytes that do not decode as no reply', () => {
    expect(decodeReply(Buffer.from([1, 2, 3]))).toBeNull();
    expect(decodeReply(Buffer.alloc(0))).toBeNull();
  });
});

describe('readOutcome', () => {
  const query = buildQuery('a.test', 'MX');
  const cname = (name: string, data: string) => ({ type: 'CNAME', name, ttl: 60, data });
  const mx = (name: string, exchange: string, ttl = 300) => ({ type: 'MX', name, ttl, data: { preference: 10, exchange } });
  const soa = { type: 'SOA', name: 'test', ttl: 900, data: { mname: 'ns.test', rname: 'h.test', minimum: 120 } };

  it('follows a chain to its records and takes the shortest TTL', () => {
    const reply = replyTo(query, { answers: [cname('a.test', 'b.test'), mx('b.test', 'mx.b.test')] });
    expect(readOutcome(reply, 'a.test', 'MX', 'NOERROR')).toEqual({ kind: 'records', ttl: 60, records: [{ exchange: 'mx.b.test', priority: 10 }] });
  });

  it('keeps the most preferred records, and takes the TTL of the whole set', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ ...mx('a.test', `MX${i}.a.test.`, i === 29 ? 7 : 300), data: { preference: 100 - i, exchange: `MX${i}.a.test.` } }));
    const outcome = readOutcome(replyTo(query, { answers: many }), 'a.test', 'MX', 'NOERROR');
    expect(outcome).toMatchObject({ kind: 'records', ttl: 7 });
    expect(outcome.kind === 'records' && outcome.records.map((r) => `${r.priority} ${r.exchange}`)).toEqual(
      Array.from({ length: 10 }, (_, i) => `${71 + i} mx${29 - i}.a.test`),
    );
  });

  it('ignores records for names off the chain', () => {
    const reply = replyTo(query, { answers: [mx('evil.test', 'mx.evil.test')], authorities: [soa] });
    expect(readOutcome(reply, 'a.test', 'MX', 'NOERROR')).toEqual({ kind: 'nodata', ttl: 120 });
  });

  it('asks again for a target the server left out', () => {
    const reply = replyTo(query, { answers: [cname('a.test', 'b.test')] });
    expect(readOutcome(reply, 'a.test', 'MX', 'NOERROR')).toEqual({ kind: 'alias', target: 'b.test', ttl: 60 });
  });

  it('stops at a CNAME loop', () => {
    const reply = replyTo(query, { answers: [cname('a.test', 'b.test'), cname('b.test', 'a.test')] });
    expect(readOutcome(reply, 'a.test', 'MX', 'NOERROR').kind).toBe('nodata');
  });

  it('reads the negative TTL as min(SOA TTL, MINIMUM) (RFC 2308 §5)', () => {
    const reply = replyTo(query, { authorities: [{ ...soa, ttl: 30 }] });
    expect(readOutcome(reply, 'a.test', 'MX', 'NXDOMAIN')).toEqual({ kind: 'nxdomain', ttl: 30 });
  });
});

describe('decodeReply', () => {
  const query = buildQuery('a.test', 'MX');
  const mx = (i: number) => ({ type: 'MX', name: 'a.test', ttl: 60, data: { preference: i, exchange: `mx${i}.a.test` } });
  const soa = { type: 'SOA', name: 'test', ttl: 900, data: { mname: 'ns.test', rname: 'h.test', minimum: 120 } };

  it(`reads at most ${MAX_RECORDS_READ} records of a reply, the answer section first`, () => {
    const many = Array.from({ length: 300 }, (_, i) => mx(i));
    const reply = replyTo(query, { answers: many, authorities: [soa], additionals: [mx(1)] });
    expect(reply.answers).toHaveLength(MAX_RECORDS_READ);
    expect(reply.answers?.at(-1)).toMatchObject({ data: { exchange: `mx${MAX_RECORDS_READ - 1}.a.test` } });
    expect([reply.authorities, reply.additionals]).toEqual([[], []]);
  });

  it('reads every section of a reply within the bound', () => {
    const reply = replyTo(query, { answers: [mx(1), mx(2)], authorities: [soa], additionals: [mx(3)] });
    expect([reply.answers?.length, reply.authorities?.length, reply.additionals?.length]).toEqual([2, 1, 1]);
  });
});
