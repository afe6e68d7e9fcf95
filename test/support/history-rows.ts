import { HistoryBatchEncoder } from '../../src/store/history-batch.js';
import type { Store } from '../../src/store/index.js';
import type { HistoryWrite } from '../../src/store/sqlite-log-worker.js';

/**
 * The history's rows put straight into, or counted in, the tables as each engine keeps them:
 * PostgreSQL's three (history_counts, history_members, history_keys), SQLite's one by key
 * (migration 17, history_cells; with migration 18's reverse rows). Rows are given in PostgreSQL's shape.
 */
export interface SeedCount { account_id: string; key: Buffer; grain: number; bucket: number; n: number }
export interface SeedMember { account_id: string; key: Buffer; kind: string; member: Buffer; last_seen: number }

export async function seedHistory(store: Store, rows: { counts?: SeedCount[]; members?: SeedMember[] }): Promise<void> {
  const db = store.engine.db;
  const counts = rows.counts ?? [];
  const members = rows.members ?? [];
  if (store.engine.kind === 'sqlite') {
    const cells = [
      // A counter's last_seen: a time within its bucket (its start here), as pruning finds it.
      ...counts.map((c) => ({ account_id: c.account_id, key: c.key, kind: c.grain === 1 ? 'm' : 'h', sub: c.bucket, n: c.n, last_seen: c.bucket * (c.grain === 1 ? 60_000 : 3_600_000) })),
      ...members.map((m) => ({ account_id: m.account_id, key: m.key, kind: m.kind, sub: m.member, last_seen: m.last_seen })),
      // An accounts set's member with its reverse row under the member's key, as the writer writes it (migration 18).
      ...members.filter((m) => m.kind === 'a').map((m) => ({ account_id: m.account_id, key: m.member, kind: 'r', sub: m.key, last_seen: m.last_seen })),
    ];
    if (cells.length > 0) await db.insertInto('history_cells').values(cells).execute();
    return;
  }
  if (counts.length > 0) await db.insertInto('history_counts').values(counts.map((c) => ({ ...c, shard: 0 }))).execute();
  if (members.length > 0) await db.insertInto('history_members').values(members).execute();
}

/**
 * Rows the history holds: identifiers, counters (velocity's not included; `m` per minute, `h` per
 * hour, if given) and set members (of one kind, if given). PostgreSQL's counters are sharded: a
 * bucket may be several rows there.
 */
export async function historyRowCount(store: Store, what: 'identifiers' | 'counters' | 'members', kind?: string): Promise<number> {
  const db = store.engine.db;
  if (store.engine.kind === 'sqlite') {
    const kinds = kind !== undefined ? [kind] : what === 'identifiers' ? ['k'] : what === 'counters' ? ['m', 'h'] : ['a', 'd', 'c'];
    const row = await db.selectFrom('history_cells').select((eb) => eb.fn.countAll<number>().as('n')).where('kind', 'in', kinds).executeTakeFirstOrThrow();
    return Number(row.n);
  }
  const table = what === 'identifiers' ? 'history_keys' : what === 'counters' ? 'history_counts' : 'history_members';
  let query = db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
  if (what === 'members' && kind !== undefined) query = query.where('kind' as never, '=', kind as never);
  if (what === 'counters' && kind !== undefined) query = query.where('grain' as never, '=', (kind === 'm' ? 1 : 2) as never);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/**
 * A HistoryWrite's rows as the writer thread's binary batch (src/store/history-batch.ts), grouped by
 * kind, the identifier written again whenever it changes: tests and bench/writer.ts build rows;
 * the history builds its batch directly, an identifier's rows together.
 */
export function encodeHistoryWrite(write: HistoryWrite): Uint8Array {
  const encoder = new HistoryBatchEncoder();
  let subject: string | null = null;
  const about = (account: unknown, key: unknown) => {
    const id = `${account as string}\u0000${Buffer.from(key as Uint8Array).toString('hex')}`;
    if (id === subject) return;
    subject = id;
    encoder.subject(account as string, key as Uint8Array);
  };
  const n = (value: unknown) => value as number | null;
  for (const [account, key, first, last, country, latitude, longitude, radiusKm, asn, anonymous] of write.keys) {
    about(account, key);
    encoder.key({ firstSeen: first as number, lastSeen: last as number, country: country as string | null, latitude: n(latitude), longitude: n(longitude), radiusKm: n(radiusKm), asn: n(asn), anonymous: n(anonymous) });
  }
  for (const [account, key, grain, bucket, count, at] of write.counts) {
    about(account, key);
    encoder.count(grain as number, bucket as number, count as number, at as number);
  }
  for (const [account, key, kind, member] of write.evicted) {
    about(account, key);
    encoder.evicted(kind as string, member as Uint8Array);
  }
  for (const [account, key, kind, member, seen] of write.members) {
    about(account, key);
    encoder.member(kind as string, member as Uint8Array, seen as number);
  }
  for (const [account, key, series, bucket, count, expires] of write.velocity) {
    about(account, key);
    encoder.velocity(series as string, bucket as number, count as number, expires as number);
  }
  return encoder.finish();
}
