import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { ENGINES, freshDatabaseUrl, openTestStore, type EngineName } from '../support/store.js';

/**
 * The webhook delivery queue on both engines, with the real store and its clock passed in: a
 * replica that stops mid-send leaves its lease to expire and the delivery is taken again (never
 * lost; the late owner's record is refused), failures back off and stop after a day, and two
 * replicas claiming the same queue at once (two stores on one database) send each delivery once.
 */
const T = Date.UTC(2026, 10, 26, 21, 0, 0);
const ok = { outcome: 'delivered' as const, status_code: 204, error: null };
const down = { outcome: 'failed' as const, status_code: null, error: 'ECONNREFUSED' };

describe.each(ENGINES)('the webhook queue on %s', (engine: EngineName) => {
  const opened: Store[] = [];
  const open = async (url: string) => {
    const store = await openTestStore({ url });
    opened.push(store);
    return store;
  };
  const enqueue = (store: Store, n: number, at = T) =>
    Promise.all(Array.from({ length: n }, (_, i) => store.webhookQueue.enqueue(store.engine.db, { account: 'default', endpointId: null, type: 'review.resolved', payload: `{"n":${i}}`, at })));
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  it('takes a delivery again once the lease of a replica that stopped mid-send expires, and only then', async () => {
    const url = await freshDatabaseUrl(engine);
    const before = await open(url);
    const ids = await enqueue(before, 3);
    expect((await before.webhookQueue.claimDue('a', T, { leaseMs: 60_000 })).map((d) => d.id).sort()).toEqual([...ids].sort());
    await before.close(); // the restart, mid-send
    opened.splice(opened.indexOf(before), 1);

    const after = await open(url);
    expect(await after.webhookQueue.claimDue('b', T + 59_000)).toEqual([]);
    const again = await after.webhookQueue.claimDue('b', T + 61_000);
    expect(again.map((d) => d.id).sort()).toEqual([...ids].sort());
    // The first owner's late answer is not recorded over the new lease.
    expect(await after.webhookQueue.record(ids[0]!, 'a', ok, T + 62_000)).toBe(false);
    for (const id of ids) expect(await after.webhookQueue.record(id, 'b', ok, T + 62_000)).toBe(true);
    expect(await after.webhookQueue.claimDue('b', T + 3_600_000)).toEqual([]);
    expect(await after.webhookQueue.get(ids[0]!)).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 204, delivered_at: T + 62_000 });
  });

  it('backs off after a failure, and gives up a day after the delivery was queued', async () => {
    const store = await open(await freshDatabaseUrl(engine));
    const [id] = await enqueue(store, 1);
    await store.webhookQueue.claimDue('a', T);
    await store.webhookQueue.record(id!, 'a', down, T + 100);
    expect(await store.webhookQueue.get(id!)).toMatchObject({ status: 'pending', attempts: 1, next_attempt_at: T + 10_100, last_error: 'ECONNREFUSED' });
    expect(await store.webhookQueue.claimDue('a', T + 10_000)).toEqual([]);
    expect(await store.webhookQueue.claimDue('a', T + 10_100)).toHaveLength(1);
    await store.webhookQueue.record(id!, 'a', down, T + 10_200);
    expect((await store.webhookQueue.get(id!))!.next_attempt_at).toBe(T + 70_200);
    // Near the day's end, a failure whose next try would fall past it is the last.
    await store.webhookQueue.claimDue('a', T + 86_200_000);
    await store.webhookQueue.record(id!, 'a', down, T + 86_200_000);
    expect(await store.webhookQueue.get(id!)).toMatchObject({ status: 'failed', attempts: 3 });
    expect(await store.webhookQueue.claimDue('a', T + 90_000_000)).toEqual([]);
  });

  it('lets two replicas claiming at once send each delivery once', async () => {
    const url = await freshDatabaseUrl(engine);
    const [one, two] = [await open(url), await open(url)];
    const ids = await enqueue(one, 60);
    const sent: string[] = [];
    const replica = async (store: Store, name: string) => {
      for (;;) {
        const batch = await store.webhookQueue.claimDue(name, T + 1_000, { limit: 4 });
        if (batch.length === 0) return;
        for (const delivery of batch) {
          sent.push(delivery.id);
          expect(await store.webhookQueue.record(delivery.id, name, ok, T + 1_000)).toBe(true);
        }
      }
    };
    await Promise.all([replica(one, 'one'), replica(two, 'two'), replica(one, 'one-b'), replica(two, 'two-b')]);
    expect(sent).toHaveLength(60);
    expect(new Set(sent)).toEqual(new Set(ids));
  });
});
