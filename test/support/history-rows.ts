import Sqlite from 'better-sqlite3';
import { HistoryBatchEncoder } from '../../src/store/history-batch.js';
import { forEachCell, packedHistory, unpack, type PackedRow } from '../../src/store/history-packed.js';
import type { Store } from '../../src/store/index.js';
import type { HistoryWrite } from '../../src/store/sqlite-log-worker.js';

/**
 * The history's rows put straight into, or counted in, the tables as each engine keeps them:
 * PostgreSQL's three (history_counts, history_members, history_keys), SQLite's one row an identifier
 * (migration 19, history_packed: counters, members and reverse entries in blobs). Rows are given in
 * PostgreSQL's shape.
 */
export interface SeedCount { account_id: string; key: Buffer; grain: number; bucket: number; n: number }
export interface SeedMember { account_id: string; key: Buffer; kind: string; member: Buffer; last_seen: number }

export async function seedHistory(store: Store, rows: { counts?: SeedCount[]; members?: SeedMember[] }): Promise<void> {
  const db = store.engine.db;
  const counts = rows.counts ?? [];
  const members = rows.members ?? [];
  if (store.engine.database.engine === 'sqlite') {
    // As the writer thread writes them (an accounts set's member with its reverse entry under the
    // member's key): counters more than a window behind their row's latest are not kept.
    const sqlite = new Sqlite(store.engine.database.path, { timeout: 5_000 });
    try {
      const packed = packedHistory(sqlite);
      sqlite.transaction(() => packed.write({
        keys: [],
        counts: counts.map((c) => [c.account_id, c.key, c.grain, c.bucket, c.n, c.bucket * (c.grain === 1 ? 60_000 : 3_600_000)]),
        members: members.map((m) => [m.account_id, m.key, m.kind, m.member, m.last_seen]),
        evicted: [],
        velocity: [],
      })).immediate();
    } finally {
      sqlite.close();
    }
    return;
  }
  if (counts.length > 0) await db.insertInto('history_counts').values(counts.map((c) => ({ ...c, shard: 0 }))).execute();
  if (members.length > 0) await db.insertInto('history_members').values(members).execute();
}

/**
 * Rows the history holds: identifiers, counters (velocity's not included; `m` per minute, `h` per
 * hour, if given) and set members (of one kind, if given; `r` on SQLite: reverse entries). On SQLite
 * the cells of every row are counted (history_packed). PostgreSQL's counters are sharded: a bucket
 * may be several rows there.
 */
export async function historyRowCount(store: Store, what: 'identifiers' | 'counters' | 'members', kind?: string): Promise<number> {
  const db = store.engine.db;
  if (store.engine.kind === 'sqlite') {
    const rows = await db.selectFrom('history_packed').select(['first_seen', 'cells', 'reverse']).execute();
    if (what === 'identifiers') return rows.filter((r) => r.first_seen !== null).length;
    let n = 0;
    const kinds = kind !== undefined ? [kind] : what === 'counters' ? ['m', 'h'] : ['a', 'd', 'c'];
    for (const row of rows) {
      forEachCell(row.cells, (grain) => {
        if (kinds.includes(grain === 1 ? 'm' : 'h')) n += 1;
      }, (code) => {
        if (kinds.includes(String.fromCharCode(code))) n += 1;
      });
      if (kinds.includes('r')) forEachCell(row.reverse, () => undefined, () => (n += 1));
    }
    return n;
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
  // Fresh subjects first, each once (the writer takes them before any row).
  for (const [account, key] of write.fresh ?? []) {
    encoder.subject(account as string, key as Uint8Array, true);
    subject = `${account as string}\u0000${Buffer.from(key as Uint8Array).toString('hex')}`;
  }
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

/** SQLite: every row of history_packed, its blobs unpacked (members keyed kind + latin1 bytes, reverse entries by latin1 key). */
export async function packedRows(store: Store): Promise<PackedRow[]> {
  const rows = await store.engine.db.selectFrom('history_packed').selectAll().execute();
  return rows.map((r) => unpack({
    rowid: null, account: r.account_id, key: r.key, firstSeen: r.first_seen, lastSeen: r.last_seen, country: r.country, latitude: r.latitude, longitude: r.longitude,
    radiusKm: r.radius_km, asn: r.asn, anonymous: r.anonymous,
  }, r.cells, r.reverse));
}

/** SQLite: the row under the key (1 or 0), and the members and reverse entries naming it. */
export async function packedTraces(store: Store, key: Buffer): Promise<number> {
  const k = key.toString('latin1');
  let n = 0;
  for (const row of await packedRows(store)) {
    if (row.key.equals(key)) n += 1;
    for (const m of row.members.keys()) if (m.slice(1) === k) n += 1;
    if (row.reverse.has(k)) n += 1;
  }
  return n;
}
