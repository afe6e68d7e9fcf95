import type { DnsServer } from '../config/config.js';
import { MAX_CNAME_HOPS, readOutcome } from './answer.js';
import { TtlCache, type CacheLimits } from './cache.js';
import { DnsFailure, socketFailure, type FailureReason } from './failure.js';
import { DEFAULT_BACKOFF, ServerHealth, type BackoffOptions, type CheckResult } from './health.js';
import { InFlightLimit } from './limiter.js';
import { buildQuery, canonicalName, rcodeOf, type DecodedPacket, type RecordType } from './message.js';
import { recordsBytes, stringBytes, type RecordData } from './records.js';
import { queryTcp } from './tcp.js';
import { queryUdp } from './udp.js';

/** The answer to "what records of this type does this name have?" Records as kept: see records.ts. */
export type LookupResult<R = RecordData[RecordType]> =
  | { kind: 'records'; records: readonly R[] }
  | { kind: 'nxdomain' }
  | { kind: 'nodata' }
  | { kind: 'failure'; reason: FailureReason; detail: string };

/** Seconds; TTLs outside are clamped so one record can neither pin an entry for days nor defeat the cache. */
export interface TtlBounds {
  positiveMin: number;
  positiveMax: number;
  negativeMin: number;
  negativeMax: number;
  /** For a negative answer without an SOA to read the TTL from. */
  negativeDefault: number;
}

export interface ResolverOptions {
  /** Tried in order, like resolv.conf. */
  servers: DnsServer[];
  /** One overall deadline per lookup, CNAME hops and retries included (`DNS_TIMEOUT_MS`). */
  timeoutMs: number;
  /** Per query sent; defaults to a third of the deadline, so there is time to try another server. */
  attemptTimeoutMs?: number;
  /** Tries per server within the deadline. */
  attemptsPerServer?: number;
  maxInFlight?: number;
  /** Look-ups waiting for a free query slot; past it a look-up fails at once (`local`). */
  maxWaiting?: number;
  cacheEntries?: number;
  /** The cache's bound in estimated bytes (see `answerBytes`). */
  cacheBytes?: number;
  ttl?: Partial<TtlBounds>;
  backoff?: Partial<BackoffOptions>;
  /** Milliseconds clock for cache expiry and back-off; injected by tests. */
  now?: () => number;
}

export interface Resolver {
  /** Never rejects: a lookup that cannot be answered is a `failure` with its reason. */
  lookup<T extends RecordType>(name: string, type: T, signal?: AbortSignal): Promise<LookupResult<RecordData[T]>>;
  /**
   * The answer `lookup` would give from the cache, or `undefined` when it would have to ask: never
   * sends a query. The same object is returned while the entry lives, so callers may memoize on it.
   */
  cached<T extends RecordType>(name: string, type: T): LookupResult<RecordData[T]> | undefined;
  readonly cacheSize: number;
  /** Estimated bytes the cache holds (see `answerBytes`). */
  readonly cacheBytes: number;
  readonly cacheLimits: CacheLimits;
  readonly inFlight: number;
  /** Whether every server is backing off (see health.ts). */
  readonly backingOff: boolean;
  /** Each server (`host:port`) and whether it is backing off, in the configured order. */
  servers(): Array<{ server: string; backingOff: boolean }>;
  /**
   * Counts since start, for metrics: look-ups answered from the cache, and look-ups that had to
   * ask, by outcome (`records`, `nxdomain`, `nodata`, or the failure's reason). Plain counters
   * read when scraped: nothing on the request path but an increment.
   */
  counts(): { cacheHits: number; outcomes: ReadonlyMap<string, number> };
}

export const RESOLVER_DEFAULTS = {
  attemptsPerServer: 2,
  maxInFlight: 256,
  maxWaiting: 1_024,
  /** 10,000 answers of a typical size take about 6 MiB; 16 MiB hold some 2,700 of the largest. */
  cacheEntries: 10_000,
  cacheBytes: 16 * 2 ** 20,
  ttl: { positiveMin: 5, positiveMax: 3_600, negativeMin: 5, negativeMax: 900, negativeDefault: 60 } satisfies TtlBounds,
};

type Answered = Exclude<LookupResult, { kind: 'failure' }>;

/**
 * Estimated bytes of one cache entry, for the byte bound: its key, the entry and answer objects,
 * what deliverability derives from an answer and keeps beside it (about 200 bytes), and the kept
 * records (records.ts). At most about 6 KB: ten MX records of 253-character names.
 */
export function answerBytes(key: string, answer: Answered): number {
  return 400 + stringBytes(key) + (answer.kind === 'records' ? recordsBytes(answer.records) : 0);
}

/** The liveness question (health.ts): the root's NS set, which a recursive resolver always holds. */
const CHECK_NAME = '.';
/** Never aborted: the liveness check ends by its own timeout. */
const NO_ABORT = new AbortController().signal;

export function createResolver(options: ResolverOptions): Resolver {
  if (options.servers.length === 0) throw new Error('createResolver: no DNS servers given');
  const now = options.now ?? Date.now;
  const ttl: TtlBounds = { ...RESOLVER_DEFAULTS.ttl, ...options.ttl };
  const attemptTimeoutMs = options.attemptTimeoutMs ?? Math.max(20, Math.floor(options.timeoutMs / 3));
  const attemptsPerServer = options.attemptsPerServer ?? RESOLVER_DEFAULTS.attemptsPerServer;
  const backoff: BackoffOptions = { ...DEFAULT_BACKOFF, ...options.backoff };
  const servers = options.servers.map((server) => ({ server, health: new ServerHealth(backoff, now, () => checkAlive(server)) }));
  const cache = new TtlCache<Answered>(
    { entries: options.cacheEntries ?? RESOLVER_DEFAULTS.cacheEntries, bytes: options.cacheBytes ?? RESOLVER_DEFAULTS.cacheBytes },
    answerBytes,
    now,
  );
  const limit = new InFlightLimit(options.maxInFlight ?? RESOLVER_DEFAULTS.maxInFlight, options.maxWaiting ?? RESOLVER_DEFAULTS.maxWaiting);
  const pending = new Map<string, Promise<LookupResult>>();
  let cacheHits = 0;
  const outcomes = new Map<string, number>();
  const counted = <R extends LookupResult>(result: R): R => {
    const outcome = result.kind === 'failure' ? result.reason : result.kind;
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    return result;
  };

  /**
   * One question to one server: UDP, then TCP when the reply is truncated (RFC 7766 §5). The
   * truncated reply already shows the server is up, so a TCP leg that fails is not held against it.
   */
  async function ask(server: DnsServer, health: ServerHealth, name: string, type: RecordType, deadline: AbortSignal): Promise<DecodedPacket> {
    const query = buildQuery(name, type);
    const reply = await queryUdp(server, query, attemptTimeoutMs, deadline);
    if (!reply.flag_tc) return reply;
    health.answered();
    return queryTcp(server, query, attemptTimeoutMs, deadline);
  }

  /**
   * The liveness check (health.ts), outside the in-flight cap: one at a time per server, and it
   * must not queue behind the very queries whose silence it is checking.
   */
  async function checkAlive(server: DnsServer): Promise<CheckResult> {
    try {
      const reply = await queryUdp(server, buildQuery(CHECK_NAME, 'NS'), attemptTimeoutMs, NO_ABORT);
      return rcodeOf(reply) === 'REFUSED' ? 'refused' : 'answered';
    } catch (error) {
      const { reason } = socketFailure(error, `${server.host}:${server.port}`);
      return reason === 'timeout' ? 'silent' : reason === 'network' ? 'unreachable' : 'inconclusive';
    }
  }

  /** Bounded retries across the servers, skipping those backing off. */
  async function exchange(name: string, type: RecordType, deadline: AbortSignal): Promise<{ reply: DecodedPacket; rcode: string }> {
    let last: DnsFailure | null = null;
    const attempts = servers.length * attemptsPerServer;
    for (let attempt = 0; attempt < attempts && !deadline.aborted; attempt += 1) {
      const { server, health } = servers[attempt % servers.length]!;
      if (!health.usable()) continue;
      const where = `${server.host}:${server.port}`;
      const mark = health.mark();
      try {
        const reply = await limit.run(deadline, () => ask(server, health, name, type, deadline));
        const rcode = rcodeOf(reply);
        if (rcode === 'REFUSED') {
          health.refused();
          last = new DnsFailure('refused', where);
          continue;
        }
        health.answered();
        if (rcode === 'NOERROR' || rcode === 'NXDOMAIN') return { reply, rcode };
        // SERVFAIL is about the name (e.g. its own servers are down), not about this server.
        last = new DnsFailure('servfail', `${rcode} from ${where}`);
      } catch (error) {
        const failure = socketFailure(error, where);
        if (failure.reason === 'aborted') break;
        last = failure;
        // Out of descriptors or query slots: asking again now would fail the same way, and no
        // server is to blame.
        if (failure.reason === 'local') break;
        if (failure.reason === 'timeout') health.timedOut(mark);
        else if (failure.reason === 'network') health.unreachable(mark);
        // `malformed` (a TCP reply that made no sense) is about that reply; no verdict on the server.
      }
    }
    if (deadline.aborted) throw new DnsFailure('timeout', `no answer within ${options.timeoutMs} ms${last ? ` (last: ${last.message})` : ''}`);
    throw last ?? new DnsFailure('backoff', 'every DNS server failed recently');
  }

  function cacheFor(key: string, result: Answered, seconds: number | null, capSeconds: number): void {
    const positive = result.kind === 'records';
    const raw = seconds ?? ttl.negativeDefault;
    const [min, max] = positive ? [ttl.positiveMin, ttl.positiveMax] : [ttl.negativeMin, ttl.negativeMax];
    const clamped = Math.min(Math.max(Math.min(raw, capSeconds), min), max);
    cache.set(key, result, clamped * 1000);
  }

  async function resolve<T extends RecordType>(name: string, type: T, key: string): Promise<LookupResult<RecordData[T]>> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
    try {
      let current = name;
      let chainTtl = Number.POSITIVE_INFINITY;
      for (let hop = 0; hop <= MAX_CNAME_HOPS; hop += 1) {
        const { reply, rcode } = await exchange(current, type, deadline.signal);
        const outcome = readOutcome(reply, current, type, rcode);
        if (outcome.kind === 'alias') {
          chainTtl = Math.min(chainTtl, outcome.ttl);
          current = outcome.target;
          continue;
        }
        const result: Exclude<LookupResult<RecordData[T]>, { kind: 'failure' }> =
          outcome.kind === 'records' ? { kind: 'records', records: outcome.records } : { kind: outcome.kind };
        cacheFor(key, result, outcome.ttl, chainTtl);
        return result;
      }
      return { kind: 'failure', reason: 'malformed', detail: `CNAME chain from ${name} longer than ${MAX_CNAME_HOPS}` };
    } catch (error) {
      const failure = socketFailure(error, name);
      return { kind: 'failure', reason: failure.reason, detail: failure.message };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    lookup<T extends RecordType>(name: string, type: T, signal?: AbortSignal) {
      const key = `${type} ${canonicalName(name)}`;
      const cached = cache.get(key);
      if (cached !== undefined) {
        cacheHits += 1;
        return Promise.resolve(cached as LookupResult<RecordData[T]>);
      }
      if (signal?.aborted) return Promise.resolve(ABORTED);
      let shared = pending.get(key) as Promise<LookupResult<RecordData[T]>> | undefined;
      if (shared === undefined) {
        // Concurrent lookups of one name share one query; each caller still stops at its own deadline.
        shared = resolve(name, type, key).then(counted).finally(() => pending.delete(key));
        pending.set(key, shared);
      }
      return signal === undefined ? shared : untilAborted(shared, signal);
    },
    cached<T extends RecordType>(name: string, type: T) {
      const answer = cache.get(`${type} ${canonicalName(name)}`) as LookupResult<RecordData[T]> | undefined;
      if (answer !== undefined) cacheHits += 1;
      return answer;
    },
    get cacheSize() {
      return cache.size;
    },
    get cacheBytes() {
      return cache.bytes;
    },
    get cacheLimits() {
      return cache.limits;
    },
    get inFlight() {
      return limit.inFlight;
    },
    get backingOff() {
      return servers.every((s) => s.health.backingOff);
    },
    servers: () => servers.map(({ server, health }) => ({ server: `${server.host}:${server.port}`, backingOff: health.backingOff })),
    counts: () => ({ cacheHits, outcomes }),
  };
}

const ABORTED: LookupResult<never> = { kind: 'failure', reason: 'aborted', detail: 'the caller stopped waiting' };

function untilAborted<R>(result: Promise<LookupResult<R>>, signal: AbortSignal): Promise<LookupResult<R>> {
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    void result.then((r) => {
      signal.removeEventListener('abort', onAbort);
      resolve(r);
    });
  });
}
