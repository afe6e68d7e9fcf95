import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { readOutcome } from '../../src/dns/answer.js';
import { answersQuery, buildQuery, decodeReply } from '../../src/dns/message.js';

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
    expect(readOutcome(reply, 'a.test', 'MX', 'NOERROR')).toMatchObject({ kind: 'records', ttl: 60, records: [{ data: { exchange: 'mx.b.test' } }] });
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
