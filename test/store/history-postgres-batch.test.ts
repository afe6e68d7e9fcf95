import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SET_KEEP } from '../../src/history/caps.js';
import { historyEvent, type Prior } from '../../src/history/event.js';
import { keyedHasher } from '../../src/history/identifiers.js';
import type { Place } from '../../src/history/place.js';
import type { HistoryStore } from '../../src/history/store.js';
import { postgresHistory, READ_BATCH, READS_IN_FLIGHT, unseenIn, visibleIn, WRITE_BUDGET_MS, WRITER_NAME } from '../../src/store/history-postgres.js';
import { ERASE_AGAIN_MS } from '../../src/store/erasure.js';
import { columnLiteral, textLiteral } from '../../src/store/pg-arrays.js';
import { freshDatabaseUrl, openTestStore } from '../support/store.js';

/**
 * PostgreSQL's reads go batched: the evaluations that arrive while READS_IN_FLIGHT statements are
 * out go together in the next, one row each. Each must get its own row back, whatever the batch's
 * size (statements are prepared for powers of two, the rows past the evaluations padded with
 * nulls), and the store's history and this replica's unwritten changes alike. Real PostgreSQL; the
 * record pool's `query` is counted, nothing else is changed.
 */
const PLACE: Place = { country: 'GB', latitude: 51.5, longitude: -0.1, radiusKm: 20, asn: 2856, anonymous: false };
const AT = Date.parse('2026-06-01T12:00:00Z');
const hash = keyedHasher(Buffer.alloc(32, 3));
const ACCOUNT = 'acme';

let pool: pg.Pool;
let recordPool: pg.Pool;
let history: HistoryStore;
let statements = 0;
/** The next read statement's query: run once this resolves (a read held back), or made to fail. */
let holdNext: { until: Promise<void> } | { fail: Error } | null = null;
beforeAll(async () => {
  const url = await freshDatabaseUrl('postgres');
  await (await openTestStore({ url })).close(); // migrated
  pool = new pg.Pool({ connectionString: url, max: 4 });
  recordPool = new pg.Pool({ connectionString: url, max: 10 });
  const query = recordPool.query.bind(recordPool) as (...args: unknown[]) => unknown;
  (recordPool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const config = args[0] as { name?: string };
    if (!config.name?.startsWith('history_read_')) return query(...args);
    statements += 1;
    const hold = holdNext;
    holdNext = null;
    if (hold === null) return query(...args);
    if ('fail' in hold) return Promise.reject(hold.fail);
    return hold.until.then(() => query(...args));
  };
  history = postgresHistory(pool, recordPool, { stepTimeoutMs: 1_000, historyDays: 30, now: () => AT });
}, 60_000);
afterAll(async () => {
  await history?.close(); // ends recordPool
  await pool?.end();
});

/** Person `p` of address `a` at `at`: their own e-mail, user and device. */
const event = (a: number, p: string, at: number) => {
  const user = hash(ACCOUNT, 'user', p);
  return historyEvent({
    account: ACCOUNT, at, ip: hash(ACCOUNT, 'ip', `198.51.100.${a}`), email: hash(ACCOUNT, 'email', `${p}@example.com`),
    identity: user, device: hash(ACCOUNT, 'device', p), user, place: PLACE,
  });
};

/** Address a's velocity counter (one series, one bucket): counted a % 5 times. */
const SERIES = 'bench_signups';
const BUCKET = Math.floor(AT / 600_000);
const counterKey = (a: number) => hash(ACCOUNT, 'ip', `velocity 198.51.100.${a}`);
const velocityRead = (a: number) => ({ key: counterKey(a), series: SERIES, from: BUCKET - 1, to: BUCKET, adds: false });

describe('PostgreSQL history reads, batched', () => {
  it('answers each evaluation of a batch from its own row, written history and unwritten alike', async () => {
    // Address a holds a people (a = 0…89), written before; they go in as one evaluation per address
    // at a time, so they batch too.
    const addresses = 90;
    for (let p = 0; p < addresses; p++) {
      await Promise.all(Array.from({ length: addresses - p - 1 }, (_, k) => history.record(event(p + k + 1, `old-${p + k + 1}-${p}`, AT - 60_000 + p))));
    }
    for (let a = 0; a < addresses; a++) {
      for (let k = 0; k < a % 5; k++) history.countAfter(ACCOUNT, [{ key: counterKey(a), series: SERIES, bucket: BUCKET, expires: Math.floor(AT / 60_000) + 600 }], AT);
    }
    await history.prune(); // written back: the store's, not the batch's
    // And address a has a % 3 more people in this replica's batch being collected (not written).
    for (let a = 0; a < addresses; a++) {
      for (let p = 0; p < a % 3; p++) await history.record(event(a, `new-${a}-${p}`, AT - 30_000 + p));
    }
    expect(history.stats().pending).toBeGreaterThan(0);

    statements = 0;
    // One new person per address, all at once: more than READ_BATCH, so the batches are full and
    // not (padded). Each reads its own address's counter and the next one's: tagged by its position.
    const people = Array.from({ length: addresses }, (_, a) => ({
      ...event(a, `now-${a}`, AT),
      velocity: { names: ['own', 'next'], reads: [velocityRead(a), velocityRead((a + 1) % addresses)], counts: [], after: [] },
    }));
    const reads = people.map((e) => history.record(e) as Promise<Prior>);
    expect(history.stats().reading).toBe(addresses);
    const priors = await Promise.all(reads);
    expect(history.stats().reading).toBe(0);
    priors.forEach((prior, a) => {
      const expected = a + (a % 3);
      expect({ a, hours: prior.ip.hours, accounts: prior.ip.accounts.count, email: prior.email.firstSeen, user: prior.user?.firstSeen, velocity: prior.velocity })
        .toEqual({ a, hours: expected, accounts: expected, email: null, user: null, velocity: [a % 5, ((a + 1) % addresses) % 5] });
    });
    // READS_IN_FLIGHT went alone at once; the rest waited and went together, READ_BATCH at most a statement.
    expect(statements).toBe(READS_IN_FLIGHT + Math.ceil((addresses - READS_IN_FLIGHT) / READ_BATCH));

    // Five of them again at once, without a device or a user for the odd ones: READS_IN_FLIGHT go
    // alone, the other three together (a statement of four, one row of it padding). Each sees itself.
    statements = 0;
    const again = await Promise.all([0, 1, 2, 3, 4].map((a) => {
      const e = event(a, `now-${a}`, AT + 1_000);
      return history.record(a % 2 === 1 ? { ...e, device: null, user: null } : e) as Promise<Prior>;
    }));
    expect(statements).toBe(READS_IN_FLIGHT + 1);
    again.forEach((prior, a) => {
      expect(prior.email.firstSeen).toBe(AT);
      expect(prior.ip.accounts.current).toBe(AT);
      expect(prior.ip.hours).toBe(a + (a % 3) + 1);
      if (a % 2 === 1) {
        expect([prior.device, prior.user]).toEqual([null, null]);
      } else {
        expect(prior.user?.firstSeen).toBe(AT);
        expect(prior.device?.firstSeen).toBe(AT);
      }
    });
  });

  it('reads serially: each sees the events sent before it, in flight or in its own statement, once', async () => {
    // A fresh address, a new person each time (a velocity counter they all count and read), and one
    // person twice: sent at once, READS_IN_FLIGHT alone, the rest in two statements, none written
    // yet. Past SET_KEEP people before it, a read's accounts set is full ("at least") unread.
    const a = 200;
    const at = AT + 120_000;
    const bucket = Math.floor(at / 600_000);
    const counter = { key: counterKey(a), series: SERIES, from: bucket - 1, to: bucket, adds: true };
    const last = READS_IN_FLIGHT + 2 * READ_BATCH - 1;
    const people = Array.from({ length: last + 1 }, (_, k) => ({
      ...event(a, k === last ? 'serial-0' : `serial-${k}`, at + k),
      velocity: { names: ['own'], reads: [counter], counts: [{ key: counterKey(a), series: SERIES, bucket, expires: Math.floor(at / 60_000) + 600 }], after: [] },
    }));
    statements = 0;
    const priors = await Promise.all(people.map((e) => history.record(e) as Promise<Prior>));
    expect(statements).toBe(READS_IN_FLIGHT + 2);
    priors.forEach((prior, k) => {
      // k events before it: the address's events and counter, its distinct people (the last is person 0 again).
      expect({ k, minutes: prior.ip.minutes, hours: prior.ip.hours, accounts: prior.ip.accounts.count, velocity: prior.velocity })
        .toEqual({ k, minutes: k, hours: k, accounts: Math.min(k, SET_KEEP), velocity: [k] });
    });
    // Person 0 again: its e-mail, user and device seen, at person 0's time; its own membership current.
    const again = priors[last]!;
    expect([again.email.firstSeen, again.email.hours, again.user?.firstSeen, again.device?.firstSeen, again.ip.accounts.current])
      .toEqual([at, 1, at, at, at]);
  });

  it('counts an event of a statement in flight once, when its batch is written before a later read runs', async () => {
    const a = 201;
    const at = AT + 180_000;
    await history.prune(); // nothing pending
    // The first read goes alone; the second is sent while the first is out (it counts the first's
    // event as in flight), but runs on the server only after that event is written and committed.
    const first = history.record(event(a, 'written-first', at)) as Promise<Prior>;
    let release!: () => void;
    holdNext = { until: new Promise<void>((resolve) => (release = resolve)) };
    const second = history.record(event(a, 'written-second', at + 1)) as Promise<Prior>;
    expect((await first).ip.hours).toBe(0);
    await history.prune(); // the first's event written
    release();
    const read = await second;
    expect([read.ip.hours, read.ip.minutes, read.ip.accounts.count]).toEqual([1, 1, 1]);
  });

  it('records the event of a read that failed: the reads sent while it was out count it once, and so do those after', async () => {
    const a = 202;
    const at = AT + 240_000;
    await history.prune();
    holdNext = { fail: new Error('the server went away') };
    const first = history.record(event(a, 'lost-first', at)) as Promise<Prior>;
    let release!: () => void;
    holdNext = { until: new Promise<void>((resolve) => (release = resolve)) };
    const second = history.record(event(a, 'lost-second', at + 1)) as Promise<Prior>;
    await expect(first).rejects.toThrow('the server went away');
    release();
    // It happened, and the second saw it in flight (counters and members alike), once: the failed
    // read's event joined the batch being collected, which the second's snapshot does not show.
    const read = await second;
    expect([read.ip.hours, read.ip.accounts.count]).toEqual([1, 1]);
    // Recorded, as a read answered too late is: written with the next batch, and read from the store.
    await history.prune();
    const after = await (history.record(event(a, 'lost-third', at + 2)) as Promise<Prior>);
    expect([after.ip.hours, after.ip.accounts.count]).toEqual([2, 2]);
    expect(history.stats().failed).toBe(0);
  });
});

describe('PostgreSQL history, an erasure and the reads out', () => {
  it('erases the event of a read still out when the erasure is called, and it is not written back after', async () => {
    let release: () => void = () => undefined;
    holdNext = { until: new Promise<void>((resolve) => (release = resolve)) };
    const a = 217;
    const at = AT + 780_000;
    const recorded = history.record(event(a, 'erased-while-read', at)) as Promise<Prior>;
    const erasing = history.erase(ACCOUNT, [hash(ACCOUNT, 'user', 'erased-while-read')]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await recorded;
    // Its user's own row, and its sets and places among the accounts of its address and device.
    const erased = await erasing;
    expect(erased.identifiers).toBe(1);
    expect(erased.memberships).toBeGreaterThanOrEqual(2);
    await history.prune(); // anything left pending written: nothing of it may come back
    const after = await (history.record(event(a, 'after-erasure', at + 1)) as Promise<Prior>);
    expect([after.ip.hours, after.ip.accounts.count]).toEqual([1, 0]);
  });
});

describe('PostgreSQL history reads, pending set members', () => {
  /**
   * Address `a`'s people `first` one at a time, then `then` at once, on a store that writes nothing
   * back meanwhile (what the reads count is pending, never stored): the accounts count each read.
   */
  const accountsSeen = async (a: number, first: number, then: number[]) => {
    const records = new pg.Pool({ connectionString: pool.options.connectionString, max: 10 });
    const held = postgresHistory(pool, records, { stepTimeoutMs: 1_000, historyDays: 30, now: () => AT, flushDelayMs: 600_000 });
    try {
      const at = AT + a * 60_000;
      const person = (p: number) => event(a, `pending-${p}`, at + p);
      for (let p = 0; p < first; p++) await held.record(person(p));
      const priors = await Promise.all(then.map((p) => held.record(person(p)) as Promise<Prior>));
      return priors.map((prior) => prior.ip.accounts.count);
    } finally {
      await held.close(); // ends `records`
    }
  };

  it('counts a member pending twice, in a batch and in its own statement, once', async () => {
    // Sixty people waiting in the batch being collected; then 47 of them again and 5 new, at once:
    // READS_IN_FLIGHT go alone, the rest in one statement whose own events repeat members of the
    // batch. Distinct accounts before each read: the sixty, and the new people ahead of it, far from
    // SET_KEEP (counted with their repeats, the reads past the 41st repeat would say SET_KEEP: "at
    // least", wrongly).
    expect(SET_KEEP).toBeGreaterThan(64);
    const again = [...Array.from({ length: 47 }, (_, p) => p), 60, 61, 62, 63, 64];
    expect(await accountsSeen(204, 60, again)).toEqual(again.map((p) => 60 + Math.max(0, p - 60)));
  });

  it('says the set is full once the pending members and its own statement reach SET_KEEP', async () => {
    // Twelve new people at once after SET_KEEP - 6: READS_IN_FLIGHT alone, then ten in one
    // statement, each seeing those ahead of it; from the one that finds SET_KEEP on, "at least".
    const before = SET_KEEP - 6;
    const fresh = Array.from({ length: 12 }, (_, k) => before + k);
    expect(await accountsSeen(205, before, fresh)).toEqual(fresh.map((p) => Math.min(p, SET_KEEP)));
  });
});

/**
 * The writer's batch fails before its commit (a statement the server cancelled, a connection lost):
 * it is sent again while its budget lasts, and meanwhile every read counts it once; given up after,
 * it is counted `failed` and no read counts it. The write statements of a store of its own fail on
 * demand; nothing else is changed.
 */
describe('PostgreSQL history writes, a batch that fails', () => {
  it('lands within the erasure\'s second pass, or is given up by then', () => {
    expect(WRITE_BUDGET_MS).toBeLessThan(ERASE_AGAIN_MS);
  });

  it('counts a batch whose attempt rolled back as unwritten, though the snapshot shows its transaction finished', async () => {
    const client = await pool.connect();
    try {
      const xidOf = async () => BigInt((await client.query<{ xid: string }>('select pg_current_xact_id()::text as xid')).rows[0]!.xid);
      const snapshot = async () => visibleIn((await client.query<{ s: string }>('select pg_current_snapshot()::text as s')).rows[0]!.s);
      await client.query('begin');
      const aborted = await xidOf();
      await client.query('rollback');
      await client.query('begin');
      const committed = await xidOf();
      await client.query('commit');
      await client.query('begin');
      const running = await xidOf();
      const seen = await pool.query<{ s: string }>('select pg_current_snapshot()::text as s'); // another session's
      const elsewhere = visibleIn(seen.rows[0]!.s);
      await client.query('rollback');
      const now = await snapshot();
      // What a snapshot says: finished, committed or not; running, not.
      expect([now(aborted), now(committed), elsewhere(running)]).toEqual([true, true, false]);
      const batch = (xid: bigint, committing: boolean) => ({ keys: new Map(), xid, committing });
      expect(unseenIn(now, batch(aborted, false))).toBe(true); // rolled back before its commit: unwritten
      expect(unseenIn(now, batch(committed, true))).toBe(false); // its commit sent, and done: written
      expect(unseenIn(elsewhere, batch(running, true))).toBe(true); // its commit sent, not done when the snapshot was taken
      expect(unseenIn(now, { keys: new Map(), xid: null })).toBe(true);
    } finally {
      client.release();
    }
  });

  let failing = 0;
  /** Called at each failed attempt, before the writer rolls back. */
  let onFail: () => void = () => undefined;
  const store = async (writeBudgetMs?: number, batchKeys?: number) => {
    const records = new pg.Pool({ connectionString: pool.options.connectionString, max: 10 });
    const connect = records.connect.bind(records) as (...args: unknown[]) => Promise<pg.PoolClient>;
    // The writer's connect() (a promise); the pool's own query() connects with a callback, left alone.
    (records as unknown as { connect: (...args: unknown[]) => unknown }).connect = async (...args: unknown[]) => {
      if (args.length > 0) return connect(...args);
      const client = await connect();
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        if ((args[0] as { name?: string }).name !== 'history_write_counts' || failing === 0) return query(...args);
        failing -= 1;
        onFail();
        return Promise.reject(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014', severity: 'ERROR' }));
      };
      return client;
    };
    return postgresHistory(pool, records, { stepTimeoutMs: 1_000, historyDays: 30, now: () => AT, flushDelayMs: 20, writeBudgetMs, batchKeys });
  };
  /** The history's writes held back until `release` (a share lock on its counters: reads go on). */
  const holdWrites = async () => {
    const blocker = await pool.connect();
    await blocker.query('begin');
    await blocker.query('lock table history_counts in share mode');
    let holding = true;
    return {
      async release() {
        if (!holding) return;
        holding = false;
        await blocker.query('rollback').catch(() => undefined);
        blocker.release();
      },
    };
  };

  it('sends it again, and the reads sent between its attempts count it once', async () => {
    const held = await store();
    try {
      const a = 210;
      const at = AT + 360_000;
      await held.record(event(a, 'retried-first', at));
      failing = 2;
      const during: Array<Promise<Prior>> = [];
      let n = 0;
      onFail = () => void during.push(held.record(event(a, `retried-during-${(n += 1)}`, at + n)) as Promise<Prior>);
      await held.prune(); // the batch's attempts, the last one written
      expect(failing).toBe(0);
      // Each read sent between attempts counts the first event (unwritten, or written once) and those before it.
      expect((await Promise.all(during)).map((p) => p.ip.hours)).toEqual([1, 2]);
      await held.prune();
      const after = await (held.record(event(a, 'retried-after', at + 10)) as Promise<Prior>);
      expect([after.ip.hours, after.ip.accounts.count]).toEqual([3, 3]);
      expect(held.stats().failed).toBe(0);
    } finally {
      onFail = () => undefined;
      failing = 0;
      await held.close();
    }
  });

  it('gives it up at its budget\'s end while the server holds it: nothing waits past it', async () => {
    const held = await store(500);
    // Taken first, so the batch cannot land before it (writes wait on it; the read does not).
    const writes = await holdWrites();
    try {
      const a = 212;
      await held.record(event(a, 'held-up', AT + 480_000));
      // The lock outlasts the budget: the last flush (close's; a prune would wait on the lock
      // itself) ends, the batch given up, while it is still held.
      await held.close();
      expect(held.stats().failed).toBe(4);
      const { rows } = await pool.query<{ n: string }>(
        `select count(*) as n from pg_stat_activity where datname = current_database() and state = 'active' and application_name = $1`, [WRITER_NAME],
      );
      expect(Number(rows[0]!.n)).toBe(0);
    } finally {
      await writes.release();
    }
  });

  it('writes a backlog as batches of batchKeys, a transaction each, and every read meanwhile counts it once', async () => {
    const held = await store(60_000, 20);
    let writes: Awaited<ReturnType<typeof holdWrites>> | undefined;
    try {
      const a = 213;
      const at = AT + 540_000;
      await held.record(event(a, 'backlog-first', at));
      // Writes wait (reads do not): the first batch is taken and held, the rest pile up.
      writes = await holdWrites();
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Eight at a time: a read statement carries several, and some straddle a batch's closing.
      const people = Array.from({ length: 32 }, (_, i) => `backlog-${i}`);
      const hours: number[] = [];
      for (let i = 0; i < people.length; i += 8) {
        const priors = await Promise.all(people.slice(i, i + 8).map((p, j) => held.record(event(a, p, at + 1 + i + j)) as Promise<Prior>));
        hours.push(...priors.map((p) => p.ip.hours));
      }
      // Each sees the first and every one before it, whichever batch holds them.
      expect(hours).toEqual(people.map((_, i) => i + 1));
      // 32 people of one address (an e-mail, a device and a user each) and the address: 97 identifiers.
      expect(held.stats().pending).toBeGreaterThanOrEqual(97);
      await writes.release();
      await held.prune(); // every batch written
      expect(held.stats()).toMatchObject({ failed: 0, refused: 0, pending: 0 });
      const emails = people.map((p) => hash(ACCOUNT, 'email', `${p}@example.com`));
      const { rows } = await pool.query<{ n: string }>({
        text: 'select count(distinct xmin::text) as n from history_keys where account_id = $1 and key = any($2::bytea[])', values: [ACCOUNT, emails],
      });
      // 96 of their identifiers at 20 or so a batch: four transactions at least wrote their e-mail addresses' rows.
      expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(4);
      const after = await (held.record(event(a, 'backlog-after', at + 41)) as Promise<Prior>);
      expect([after.ip.hours, after.ip.accounts.count]).toEqual([33, 33]);
    } finally {
      await writes?.release();
      await held.close();
    }
  });

  it('gives up a batch that waited out its budget behind others: an event lands within it of being recorded, or never', async () => {
    const held = await store(600, 8);
    const writes = await holdWrites();
    try {
      const a = 215;
      const at = AT + 660_000;
      const people = Array.from({ length: 6 }, (_, i) => `waited-${i}`);
      for (const [i, p] of people.entries()) await held.record(event(a, p, at + i));
      // 6 people and their address (in each batch), in batches of 8; the first may be given up already.
      const { pending, failed } = held.stats();
      expect(pending! + failed!).toBeGreaterThanOrEqual(19);
      // Past every batch's budget (the erasure's second pass would come after it) before the lock goes.
      await new Promise((resolve) => setTimeout(resolve, 900));
      await writes.release();
      await held.prune();
      expect(held.stats()).toMatchObject({ failed: pending! + failed!, pending: 0 });
      const emails = people.map((p) => hash(ACCOUNT, 'email', `${p}@example.com`));
      const { rows } = await pool.query<{ n: string }>({ text: 'select count(*) as n from history_keys where account_id = $1 and key = any($2::bytea[])', values: [ACCOUNT, emails] });
      expect(Number(rows[0]!.n)).toBe(0);
    } finally {
      await writes?.release();
      await held.close();
    }
  });

  it('on close, gives up the batches after one the server did not take at once, not each after an attempt', async () => {
    const held = await store(60_000, 8);
    let closed = false;
    try {
      const a = 214;
      const at = AT + 600_000;
      failing = 1_000;
      for (let i = 0; i < 12; i++) await held.record(event(a, `closing-${i}`, at + i));
      const { pending, failed } = held.stats();
      expect(pending).toBeGreaterThanOrEqual(37); // 12 people and their address, 8 identifiers a batch
      const before = failing;
      closed = true;
      await held.close();
      // At most the last attempt of the batch being sent (its pause ended); none for the four or more after it.
      expect(before - failing).toBeLessThanOrEqual(1);
      expect(held.stats()).toMatchObject({ failed: failed! + pending!, pending: 0 });
    } finally {
      failing = 0;
      if (!closed) await held.close();
    }
  });

  it('lets erase and prune end under steady traffic: each writes what was pending when it was called', async () => {
    const held = await store();
    let traffic = true;
    let flow: Promise<unknown> = Promise.resolve();
    try {
      const a = 216;
      const at = AT + 720_000;
      let n = 0;
      // Sixteen evaluations at a time, for as long as the test runs (bounded): something is always pending.
      const until = performance.now() + 12_000;
      flow = Promise.all(Array.from({ length: 16 }, async () => {
        while (traffic && performance.now() < until) await held.record(event(a, `steady-${(n += 1)}`, at + (n % 1_000)));
      }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const sleep = (ms: number) => new Promise((resolve) => setTimeout(() => resolve('still waiting'), ms));
      expect(await Promise.race([held.prune().then(() => 'pruned'), sleep(5_000)])).toBe('pruned');
      // A person recorded (their read back) just before the erasure is called: pending then, written
      // by the flush it waits for, and erased.
      await held.record(event(a, 'steady-marker', at));
      const before = n;
      const erased = await Promise.race([held.erase(ACCOUNT, [hash(ACCOUNT, 'user', 'steady-marker')]), sleep(5_000)]);
      expect(erased).toMatchObject({ identifiers: 1 });
      expect(n).toBeGreaterThan(before); // the traffic went on meanwhile
    } finally {
      traffic = false;
      await flow;
      await held.close();
    }
  });

  it('gives it up once its budget has no room for another attempt: counted failed, and read by none after', async () => {
    // Attempts at 0, 100 and 300 ms (pauses of 100 and 200, each attempt a connect and two round
    // trips); a fourth would begin at 700 at the earliest, past the budget.
    const held = await store(750);
    try {
      const a = 211;
      const at = AT + 420_000;
      await held.record(event(a, 'given-up', at));
      failing = 100;
      await held.prune();
      expect(100 - failing).toBe(3);
      // Its four identifiers (address, e-mail, device, user): lost, and said so.
      expect(held.stats().failed).toBe(4);
      const after = await (held.record(event(a, 'given-up-after', at + 1)) as Promise<Prior>);
      expect([after.ip.hours, after.ip.accounts.count]).toEqual([0, 0]);
    } finally {
      failing = 0;
      await held.close();
    }
  });
});

/**
 * The history writer and the evaluation log send their text and number arrays as literals made
 * here (pg-arrays.ts) when no value needs escaping, and as arrays for pg's client to escape
 * otherwise. Either way the server must read back exactly the values given.
 */
describe('PostgreSQL history writes, text arrays', () => {
  const strings = async (value: unknown) => (await pool.query<{ a: string[] }>({ text: 'select $1::text[] as a', values: [value] })).rows[0]!.a;

  it('reads back every string of a literal, and of an array left for the client to escape', async () => {
    const plain = ['acme', 'acme', 'a', 'NULL', '', ' spaced out ', 'with,comma', '{braces}', 'ünïcode ✓', "it's"];
    expect(typeof textLiteral(plain)).toBe('string');
    expect(await strings(textLiteral(plain))).toEqual(plain);
    for (const odd of [['acme', 'say "hi"'], ['back\\slash', 'acme'], ['acme', 'acme', 'tail"']]) {
      expect(textLiteral(odd)).toBe(odd);
      expect(await strings(textLiteral(odd))).toEqual(odd);
    }
    expect(await strings(textLiteral([]))).toEqual([]);
    // A null goes as the array (a literal would make it a string), wherever it is.
    for (const nulls of [['a', null, 'b'], [null], [null, 'a'], [null, null], ['a', 'a', null]]) {
      expect(columnLiteral(nulls)).toBe(nulls);
      expect(await strings(columnLiteral(nulls))).toEqual(nulls);
    }
    expect(textLiteral([undefined as unknown as string, 'a'])).toEqual([undefined, 'a']);
  });

  it('sends a column of numbers as a literal, and one holding a null as the array', async () => {
    const numbers = async (value: unknown) => (await pool.query<{ a: string[] }>({ text: 'select $1::bigint[] as a', values: [value] })).rows[0]!.a.map((v) => (v === null ? null : Number(v)));
    const times = [1_780_000_000_000, 0, -5, 493_884];
    expect(typeof columnLiteral(times)).toBe('string');
    expect(await numbers(columnLiteral(times))).toEqual(times);
    expect(columnLiteral([1, null, 2])).toEqual([1, null, 2]);
    expect(await numbers(columnLiteral([1, null, 2]))).toEqual([1, null, 2]);
  });

  it('writes a velocity series whose name needs escaping, and reads it back', async () => {
    await history.prune();
    const series = 'odd "series", {with} \\ all';
    const key = hash(ACCOUNT, 'ip', 'velocity odd');
    const expires = Math.floor(AT / 60_000) + 600;
    history.countAfter(ACCOUNT, [{ key, series, bucket: BUCKET, expires }, { key, series: SERIES, bucket: BUCKET, expires }], AT);
    await history.prune(); // written
    const person = event(203, 'odd-series', AT + 300_000);
    const read = await (history.record({ ...person, velocity: { names: ['odd', 'plain'], reads: [{ key, series, from: BUCKET - 1, to: BUCKET, adds: false }, { key, series: SERIES, from: BUCKET - 1, to: BUCKET, adds: false }], counts: [], after: [] } }) as Promise<Prior>);
    expect(read.velocity).toEqual([1, 1]);
  });
});
