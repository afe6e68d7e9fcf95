import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_NAME_LENGTH, MAX_RECORDS_PER_ANSWER } from '../../src/dns/records.js';
import { answerBytes, createResolver, type LookupResult, type ResolverOptions } from '../../src/dns/resolver.js';
import { closedPort, startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';

const zone: Zone = {
  'mail.test': { MX: [{ exchange: 'mx1.mail.test', priority: 10 }, { exchange: 'mx2.mail.test', priority: 20 }], ttl: 120 },
  'web.test': { A: ['192.0.2.1'] },
  'alias.test': { CNAME: 'hop.test' },
  'hop.test': { CNAME: 'mail.test' },
  'short-ttl.test': { MX: [{ exchange: 'mx.short-ttl.test', priority: 1 }], ttl: 1 },
  'slow.test': { MX: [{ exchange: 'mx.slow.test', priority: 1 }] },
  'big.test': { MX: [{ exchange: 'mx.big.test', priority: 1 }] },
  'spoofed.test': { MX: [{ exchange: 'mx.spoofed.test', priority: 1 }] },
};

const TIMEOUT = 900;
const ATTEMPT = 300;

let servers: TestDnsServer[] = [];

async function server(overrides: Partial<Parameters<typeof startDnsServer>[0]> = {}): Promise<TestDnsServer> {
  const s = await startDnsServer({ zone, ...overrides });
  servers.push(s);
  return s;
}

function resolverFor(list: Array<{ host: string; port: number }>, options: Partial<ResolverOptions> = {}) {
  return createResolver({ servers: list, timeoutMs: TIMEOUT, attemptTimeoutMs: ATTEMPT, ...options });
}

const exchanges = (result: LookupResult) =>
  result.kind === 'records' ? result.records.map((r) => (typeof r === 'string' ? r : r.exchange)) : result.kind;

/** The liveness check's question as the test server records it: the root's NS set. */
const CHECK = { name: '', type: 'NS' };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

describe('answers', () => {
  it('returns MX records', async () => {
    const s = await server();
    const result = await resolverFor([s.address]).lookup('mail.test', 'MX');
    expect(exchanges(result)).toEqual(['mx1.mail.test', 'mx2.mail.test']);
  });

  it('tells NXDOMAIN from NODATA', async () => {
    const s = await server();
    const r = resolverFor([s.address]);
    expect(await r.lookup('missing.test', 'MX')).toEqual({ kind: 'nxdomain' });
    expect(await r.lookup('web.test', 'MX')).toEqual({ kind: 'nodata' });
  });

  it('matches names case-insensitively and without the root dot', async () => {
    const s = await server();
    expect(exchanges(await resolverFor([s.address]).lookup('MAIL.Test.', 'MX'))).toEqual(['mx1.mail.test', 'mx2.mail.test']);
  });

  it('follows a CNAME chain inside the answer', async () => {
    const s = await server();
    expect(exchanges(await resolverFor([s.address]).lookup('alias.test', 'MX'))).toEqual(['mx1.mail.test', 'mx2.mail.test']);
    expect(s.queries).toHaveLength(1);
  });

  it('asks for the CNAME target when the server did not chase it', async () => {
    const s = await server({ chaseCnames: false });
    expect(exchanges(await resolverFor([s.address]).lookup('alias.test', 'MX'))).toEqual(['mx1.mail.test', 'mx2.mail.test']);
    expect(s.queries.map((q) => q.name)).toEqual(['alias.test', 'hop.test', 'mail.test']);
  });

  it('retries over TCP when the UDP reply is truncated', async () => {
    const s = await server({ faults: { 'big.test': { kind: 'truncate' } } });
    expect(exchanges(await resolverFor([s.address]).lookup('big.test', 'MX'))).toEqual(['mx.big.test']);
    expect(s.queries.map((q) => q.transport)).toEqual(['udp', 'tcp']);
  });

  it('reads a TCP reply that arrives in many pieces', async () => {
    const s = await server({ faults: { 'mail.test': { kind: 'truncate', pieces: true } } });
    expect(exchanges(await resolverFor([s.address]).lookup('mail.test', 'MX'))).toEqual(['mx1.mail.test', 'mx2.mail.test']);
    expect(s.queries.map((q) => q.transport)).toEqual(['udp', 'tcp']);
  });

  it('skips a forged reply with the wrong ID and takes the real one', async () => {
    const s = await server({ faults: { 'spoofed.test': { kind: 'spoof-then-answer' } } });
    expect(exchanges(await resolverFor([s.address]).lookup('spoofed.test', 'MX'))).toEqual(['mx.spoofed.test']);
  });
});

describe('faults', () => {
  it.each([
    ['SERVFAIL', { kind: 'servfail' }, 'servfail'],
    ['REFUSED', { kind: 'refused' }, 'refused'],
  ] as const)('reports %s as a failure, not an answer', async (_label, fault, reason) => {
    const s = await server({ faults: { 'mail.test': fault } });
    expect(await resolverFor([s.address]).lookup('mail.test', 'MX')).toMatchObject({ kind: 'failure', reason });
  });

  it.each([
    ['a dropped query', { kind: 'drop' }],
    ['a reply with the wrong ID', { kind: 'wrong-id' }],
    ['a reply to a different question', { kind: 'wrong-question' }],
    ['garbage bytes', { kind: 'garbage' }],
    ['a server slower than the deadline', { kind: 'delay', ms: 5_000 }],
  ] as const)('times out at the deadline on %s', async (_label, fault) => {
    const s = await server({ faults: { 'mail.test': fault } });
    const pending = resolverFor([s.address]).lookup('mail.test', 'MX');
    await s.waitForQueries(1);
    await vi.advanceTimersByTimeAsync(TIMEOUT);
    expect(await pending).toMatchObject({ kind: 'failure', reason: 'timeout' });
  });

  it.each([
    ['SERVFAIL', { kind: 'servfail' }],
    ['REFUSED', { kind: 'refused' }],
  ] as const)('moves on to the next server after %s', async (_label, fault) => {
    const bad = await server({ faults: { 'mail.test': fault } });
    const good = await server();
    expect(exchanges(await resolverFor([bad.address, good.address]).lookup('mail.test', 'MX'))).toHaveLength(2);
  });

  it.each([
    ['drops', { kind: 'drop' }],
    ['answers with the wrong ID', { kind: 'wrong-id' }],
    ['answers another question', { kind: 'wrong-question' }],
    ['sends garbage', { kind: 'garbage' }],
  ] as const)('answers from the second server within the deadline when the first %s', async (_label, fault) => {
    const bad = await server({ faults: { 'mail.test': fault } });
    const good = await server();
    const pending = resolverFor([bad.address, good.address]).lookup('mail.test', 'MX');
    await bad.waitForQueries(1);
    await vi.advanceTimersByTimeAsync(ATTEMPT);
    expect(exchanges(await pending)).toEqual(['mx1.mail.test', 'mx2.mail.test']);
  });

  it('fails fast on a closed port and uses the next server', async () => {
    const closed = await closedPort();
    expect(await resolverFor([closed]).lookup('mail.test', 'MX')).toMatchObject({ kind: 'failure', reason: 'network' });
    const good = await server();
    expect(exchanges(await resolverFor([closed, good.address]).lookup('mail.test', 'MX'))).toHaveLength(2);
  });

  it('waits for a slow server that answers within the attempt timeout', async () => {
    const s = await server({ faults: { 'slow.test': { kind: 'delay', ms: ATTEMPT - 50 } } });
    const pending = resolverFor([s.address]).lookup('slow.test', 'MX');
    await s.waitForQueries(1);
    await vi.advanceTimersByTimeAsync(ATTEMPT - 50);
    expect(exchanges(await pending)).toEqual(['mx.slow.test']);
  });

  it('stops at the caller’s signal', async () => {
    const s = await server({ faults: { 'mail.test': { kind: 'drop' } } });
    const controller = new AbortController();
    const pending = resolverFor([s.address]).lookup('mail.test', 'MX', controller.signal);
    await s.waitForQueries(1);
    controller.abort();
    expect(await pending).toMatchObject({ kind: 'failure', reason: 'aborted' });
  });
});

describe('cache', () => {
  it('keeps an answer for its TTL, clamped to the minimum', async () => {
    const s = await server();
    const r = resolverFor([s.address], { ttl: { positiveMin: 30 } });
    await r.lookup('mail.test', 'MX');
    await r.lookup('short-ttl.test', 'MX');
    vi.advanceTimersByTime(29_000);
    await r.lookup('mail.test', 'MX');
    await r.lookup('short-ttl.test', 'MX');
    expect(s.queries).toHaveLength(2);
    vi.advanceTimersByTime(2_000);
    await r.lookup('short-ttl.test', 'MX'); // 1 s TTL, clamped up to 30 s: expired now
    await r.lookup('mail.test', 'MX'); // 120 s TTL: still fresh
    expect(s.queries.map((q) => q.name)).toEqual(['mail.test', 'short-ttl.test', 'short-ttl.test']);
  });

  it('keeps a negative answer for the SOA minimum', async () => {
    const s = await server({ soa: { ttl: 3600, minimum: 40 } });
    const r = resolverFor([s.address]);
    await r.lookup('missing.test', 'MX');
    vi.advanceTimersByTime(39_000);
    await r.lookup('missing.test', 'MX');
    expect(s.queries).toHaveLength(1);
    vi.advanceTimersByTime(2_000);
    await r.lookup('missing.test', 'MX');
    expect(s.queries).toHaveLength(2);
  });

  it('never caches a failure', async () => {
    const s = await server({ faults: { 'mail.test': { kind: 'servfail' } } });
    const r = resolverFor([s.address], { attemptsPerServer: 1 });
    await r.lookup('mail.test', 'MX');
    s.setFault('mail.test', null);
    expect(exchanges(await r.lookup('mail.test', 'MX'))).toHaveLength(2);
  });

  it('evicts the least recently used entry at its bound', async () => {
    const s = await server();
    const r = resolverFor([s.address], { cacheEntries: 2 });
    await r.lookup('mail.test', 'MX');
    await r.lookup('web.test', 'A');
    await r.lookup('mail.test', 'MX'); // mail.test is now the most recent
    await r.lookup('slow.test', 'MX'); // evicts web.test
    expect(r.cacheSize).toBe(2);
    await r.lookup('mail.test', 'MX');
    await r.lookup('web.test', 'A');
    expect(s.queries.map((q) => q.name)).toEqual(['mail.test', 'web.test', 'slow.test', 'web.test']);
  });

  it('shares one query between concurrent lookups of a name', async () => {
    const s = await server();
    const r = resolverFor([s.address]);
    const results = await Promise.all([r.lookup('mail.test', 'MX'), r.lookup('mail.test', 'MX'), r.lookup('MAIL.test', 'MX')]);
    expect(results.map(exchanges)).toEqual(Array(3).fill(['mx1.mail.test', 'mx2.mail.test']));
    expect(s.queries).toHaveLength(1);
  });
});

describe('what an answer keeps', () => {
  it('keeps the most preferred MX records of a huge answer, each exchange once, in order', async () => {
    // Some 3,000 records of ~245-character names in one 64 KB TCP reply; preferences run downwards.
    const s = await server({ zone: { 'hostile.test': { hugeMx: true } } });
    const result = await resolverFor([s.address]).lookup('hostile.test', 'MX');
    if (result.kind !== 'records') throw new Error(`expected records, got ${result.kind}`);
    expect(result.records).toHaveLength(MAX_RECORDS_PER_ANSWER);
    const priorities = result.records.map((r) => r.priority);
    expect(priorities).toEqual([...priorities].sort((a, b) => a - b));
    expect(new Set(result.records.map((r) => r.exchange)).size).toBe(MAX_RECORDS_PER_ANSWER);
    expect(result.records.every((r) => r.exchange.length <= MAX_NAME_LENGTH && r.exchange.endsWith('.hostile.test'))).toBe(true);
    expect(Object.isFrozen(result.records) && result.records.every((r) => Object.isFrozen(r))).toBe(true);
    expect(s.queries.map((q) => q.transport)).toEqual(['udp', 'tcp']);
  });

  it('keeps one record per exchange, the most preferred, and the null MX as "."', async () => {
    const s = await server({
      zone: {
        'twice.test': { MX: [{ exchange: 'B.twice.test.', priority: 20 }, { exchange: 'a.twice.test', priority: 30 }, { exchange: 'b.twice.test', priority: 5 }] },
        'null.test': { MX: [{ exchange: '.', priority: 0 }] },
      },
    });
    const r = resolverFor([s.address]);
    expect(await r.lookup('twice.test', 'MX')).toMatchObject({
      records: [{ exchange: 'b.twice.test', priority: 5 }, { exchange: 'a.twice.test', priority: 30 }],
    });
    expect(await r.lookup('null.test', 'MX')).toMatchObject({ records: [{ exchange: '.', priority: 0 }] });
  });

  it('regression: holds the cache within its byte bound, however large the answers', async () => {
    // Thousands of fresh domains with huge MX answers grew the process to 4.3 GB: the cache was
    // bounded in entries only and kept every record of every answer.
    const s = await server({ zone: { '*.hostile.test': { hugeMx: true }, '*.small.test': { MX: [{ exchange: 'mx.small.test', priority: 1 }] } } });
    const bound = 5 * answerBytes('MX d0.hostile.test', { kind: 'records', records: [] }) + 20_000;
    const r = resolverFor([s.address], { cacheBytes: bound });
    for (let i = 0; i < 12; i += 1) {
      await r.lookup(`d${i}.hostile.test`, 'MX');
      await r.lookup(`d${i}.small.test`, 'MX');
      expect(r.cacheBytes).toBeLessThanOrEqual(bound);
    }
    expect(r.cacheSize).toBeLessThan(24);
    expect(r.cacheLimits).toEqual({ entries: 10_000, bytes: bound });
  });
});

describe('server health', () => {
  it('regression: never-answering names do not count against a server that answers', async () => {
    // A trickle of fresh domains whose own name servers never answer used to put the client in
    // back-off, and ~80 % of other users' domains came back unknown. Each timeout now asks the
    // server a question it always answers; it does, so it stays in use.
    const s = await server({ faults: { '*.dead.test': { kind: 'drop' }, 'servfail.test': { kind: 'servfail' } } });
    const r = resolverFor([s.address], { attemptsPerServer: 1, backoff: { threshold: 1 } });
    for (let round = 0; round < 3; round += 1) {
      const names = Array.from({ length: 10 }, (_, i) => `n${round}-${i}.dead.test`);
      const before = s.queries.length;
      const pending = names.map((n) => r.lookup(n, 'MX'));
      await s.waitForQueries(before + names.length);
      await vi.advanceTimersByTimeAsync(ATTEMPT);
      expect((await Promise.all(pending)).every((p) => p.kind === 'failure' && p.reason === 'timeout')).toBe(true);
      // One liveness check for the ten, answered.
      await s.waitForQueries(before + names.length + 1);
      expect(s.queries.at(-1)).toMatchObject(CHECK);
      await vi.waitFor(() => expect(r.backingOff).toBe(false));
      expect(await r.lookup('servfail.test', 'MX')).toMatchObject({ reason: 'servfail' });
    }
    expect(s.queries.filter((q) => q.type === 'NS')).toHaveLength(3);
    expect(exchanges(await r.lookup('web.test', 'A'))).toEqual(['192.0.2.1']);
  });

  it('backs off from a server silent to everything, checks it after the window, and comes back when it answers', async () => {
    const s = await server({ faults: { '*': { kind: 'drop' } } });
    const r = resolverFor([s.address], { attemptsPerServer: 1, backoff: { threshold: 2, initialMs: 10_000 } });
    for (let i = 0; i < 2; i += 1) {
      const before = s.queries.length;
      const pending = r.lookup(`name${i}.test`, 'MX');
      await s.waitForQueries(before + 1);
      await vi.advanceTimersByTimeAsync(ATTEMPT);
      expect(await pending).toMatchObject({ kind: 'failure', reason: 'timeout' });
      // The timeout is followed by the liveness check, which goes unanswered too: a strike.
      await s.waitForQueries(before + 2);
      expect(s.queries.at(-1)).toMatchObject(CHECK);
      await vi.advanceTimersByTimeAsync(ATTEMPT);
    }
    expect(r.backingOff).toBe(true);
    // No timer advanced: the answer comes at once, and nothing is sent.
    const sent = s.queries.length;
    expect(await r.lookup('web.test', 'A')).toMatchObject({ kind: 'failure', reason: 'backoff' });
    expect(s.queries).toHaveLength(sent);
    // After the window the liveness check goes out, not the user's query; its reply restores the server.
    s.setFault('*', null);
    vi.advanceTimersByTime(10_000);
    expect(await r.lookup('web.test', 'A')).toMatchObject({ kind: 'failure', reason: 'backoff' });
    await s.waitForQueries(sent + 1);
    expect(s.queries.slice(sent)).toEqual([expect.objectContaining(CHECK)]);
    await vi.waitFor(() => expect(r.backingOff).toBe(false));
    expect(exchanges(await r.lookup('web.test', 'A'))).toEqual(['192.0.2.1']);
  });

  it('after the window, the liveness check decides, not a user look-up of a dead name', async () => {
    // The first look-up after a window used to be the probe: a dead name there doubled the window.
    const s = await server({ faults: { '*': { kind: 'refused' }, 'dropped.test': { kind: 'drop' } } });
    const r = resolverFor([s.address], { attemptsPerServer: 1, backoff: { threshold: 1, initialMs: 1_000 } });
    expect(await r.lookup('refused.test', 'MX')).toMatchObject({ reason: 'refused' });
    await vi.waitFor(() => expect(r.backingOff).toBe(true));
    s.setFault('*', null);
    vi.advanceTimersByTime(1_000);
    expect(await r.lookup('dropped.test', 'MX')).toMatchObject({ reason: 'backoff' });
    await vi.waitFor(() => expect(r.backingOff).toBe(false));
    expect(exchanges(await r.lookup('web.test', 'A'))).toEqual(['192.0.2.1']);
  });

  it('regression: queries already in flight that fail together open the back-off window once, not once each', async () => {
    // Eight lookups of an unreachable server fail at the same moment. Each used to double the
    // window (1 s, 2 s, 4 s … up to 30 s), so a resolver that came back after a blip stayed
    // unused for many seconds under load. The window doubles per failed check, not per straggler.
    const closed = await closedPort();
    const r = resolverFor([closed], { attemptsPerServer: 1, backoff: { threshold: 2, initialMs: 1_000 } });
    const failed = await Promise.all(Array.from({ length: 8 }, (_, i) => r.lookup(`n${i}.test`, 'MX')));
    expect(failed.every((f) => f.kind === 'failure' && f.reason === 'network')).toBe(true);
    expect(r.backingOff).toBe(true);
    await server({ port: closed.port });
    vi.advanceTimersByTime(1_000);
    expect(await r.lookup('web.test', 'A')).toMatchObject({ reason: 'backoff' }); // starts the check
    await vi.waitFor(() => expect(r.backingOff).toBe(false));
    expect(exchanges(await r.lookup('web.test', 'A'))).toEqual(['192.0.2.1']);
  });

  it('moves on from a server that refuses every question, and benches it once it refuses the check too', async () => {
    const bad = await server({ faults: { '*': { kind: 'refused' } } });
    const good = await server();
    const r = resolverFor([bad.address, good.address], { attemptsPerServer: 1, backoff: { threshold: 2 } });
    expect(await r.lookup('mail.test', 'MX')).toMatchObject({ kind: 'records' }); // from the second server
    await bad.waitForQueries(2);
    expect(bad.queries.at(-1)).toMatchObject(CHECK);
    expect(await r.lookup('web.test', 'A')).toMatchObject({ kind: 'records' });
    await bad.waitForQueries(4); // a second check, refused too: two strikes
    await vi.waitFor(async () => {
      const before = bad.queries.length;
      expect(await r.lookup(`n${before}.slow.test`, 'MX')).toMatchObject({ kind: 'nxdomain' });
      expect(bad.queries.length).toBe(before); // benched: not asked
    });
    expect(r.backingOff).toBe(false); // the good server is up
  });

  it('regression: REFUSED for some names is their policy, not a reason to bench the server', async () => {
    // A resolver may refuse a zone (unbound's `local-zone: … refuse`); a fraudster's sign-ups with
    // such domains must not switch DNS off for others.
    const s = await server({ faults: { '*.blocked.test': { kind: 'refused' } } });
    const r = resolverFor([s.address], { attemptsPerServer: 1, backoff: { threshold: 1 } });
    const refused = await Promise.all(Array.from({ length: 10 }, (_, i) => r.lookup(`n${i}.blocked.test`, 'MX')));
    expect(refused.every((f) => f.kind === 'failure' && f.reason === 'refused')).toBe(true);
    expect(r.backingOff).toBe(false); // REFUSED used to be a strike at once
    await s.waitForQueries(11); // the ten, and one liveness check, which is answered
    expect(s.queries.at(-1)).toMatchObject(CHECK);
    expect(exchanges(await r.lookup('web.test', 'A'))).toEqual(['192.0.2.1']);
    expect(r.backingOff).toBe(false);
  });
});

describe('limits', () => {
  it('caps the queries in flight', async () => {
    const s = await server({ faults: { 'slow.test': { kind: 'delay', ms: 100 } } });
    const r = resolverFor([s.address], { maxInFlight: 1 });
    const slow = r.lookup('slow.test', 'MX');
    await s.waitForQueries(1);
    const next = r.lookup('mail.test', 'MX');
    expect(r.inFlight).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(exchanges(await slow)).toEqual(['mx.slow.test']);
    expect(exchanges(await next)).toHaveLength(2);
    expect(s.queries.map((q) => q.name)).toEqual(['slow.test', 'mail.test']);
  });

  it('fails at once when too many look-ups wait for a slot: a local shortage, not held against the server', async () => {
    const s = await server({ faults: { 'slow.test': { kind: 'delay', ms: 100 } } });
    const r = resolverFor([s.address], { maxInFlight: 1, maxWaiting: 1, backoff: { threshold: 1 } });
    const slow = r.lookup('slow.test', 'MX');
    await s.waitForQueries(1);
    const waiting = r.lookup('mail.test', 'MX');
    expect(await r.lookup('web.test', 'A')).toMatchObject({ kind: 'failure', reason: 'local' });
    expect(r.backingOff).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(exchanges(await slow)).toEqual(['mx.slow.test']);
    expect(exchanges(await waiting)).toHaveLength(2);
    expect(exchanges(await r.lookup('web.test', 'A'))).toEqual(['192.0.2.1']);
  });
});
