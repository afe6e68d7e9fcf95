/**
 * `npx tsx bench/history-layout.ts`: what the SQLite history's table layout costs the writer per new
 * person on a grown store (issue 24). Not the service: the write-back statements alone, in this
 * thread, on two files grown to `--people` new people each, then timed alternately in batches of
 * `--batch` (50: what the write-back timer hands the writer at ~1,000 new people a second).
 *
 * - `three tables`: the layout before migration 17 (migrations up to 16, and the writer's statements
 *   of then, copied below): a new person is 3 identifier rows, 2 counters and 5 set members in
 *   history_keys, history_counts and history_members, each row an entry in its table's primary key,
 *   which a 16-byte keyed hash places at random: ~14 b-tree pages dirtied per person on a grown store.
 * - `identity index`: migration 17, one table whose primary key starts with (account, key) holds an
 *   identifier's row, its counters and its set members side by side, so a key's rows share a page;
 *   erasure's index of accounts-set members (account, member) beside it.
 * - `reverse rows`: today's (every migration, and the writer thread's statements,
 *   SQLITE_HISTORY_WRITES in src/store/history-sql.ts): migration 18, no identity index, and with
 *   each accounts-set member a reverse row under the member's own key.
 *
 * Printed per layout: WAL frames (b-tree pages written) per person, counted with the automatic
 * checkpoint off; and CPU µs per person (user + system, this process) with it on, as the writer
 * runs, so each page's checkpoint copy is in it too. The file holds ~1 KiB per person, so the
 * default 200,000 people is a file of ~200 MB, past any cache: each new row's leaf is a miss.
 *
 *   npx tsx bench/history-layout.ts                  # 200,000 people, batches of 50, 3 alternations
 *   npx tsx bench/history-layout.ts --people 20000   # a small store: the gap is smaller
 *   npx tsx bench/history-layout.ts --layouts three-tables,identity-index,reverse-rows
 *   npx tsx bench/history-layout.ts --layouts reverse-rows,packed --people 50000 --batch 100   # against a prototype
 *   npx tsx bench/history-layout.ts --layouts 'reverse-rows,reverse-rows@mmap_size=1073741824+cache_size=-65536'
 *                                                    # the same layout under other pragmas (name@pragma+pragma)
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import Sqlite from 'better-sqlite3';
import { openSqlite } from '../src/store/sqlite.js';
import { migrate } from '../src/store/migrate.js';
import { LATEST_VERSION, MIGRATIONS } from '../src/store/migrations/index.js';
import { parseDatabaseUrl, type DatabaseUrl } from '../src/config/store-url.js';
import { SQLITE_HISTORY_WRITES } from '../src/store/history-sql.js';

const { values: options } = parseArgs({
  options: {
    people: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '50' },
    rows: { type: 'string', default: '5000' },
    repeat: { type: 'string', default: '3' },
    layouts: { type: 'string', default: 'identity-index,reverse-rows' },
  },
});
const PEOPLE = Number(options.people);
const BATCH = Number(options.batch);
const ROWS = Number(options.rows);

const key = (s: string) => createHash('sha256').update(s).digest().subarray(0, 16);
const IP = key('ip');
const NOW = Date.now();
const MINUTE = Math.floor(NOW / 60_000);
const HOUR = Math.floor(NOW / 3_600_000);

interface Layout {
  name: string;
  sqlite: Sqlite.Database;
  /** One new person, as the write-back writes them: identifiers, counters, set members, the IP's set trimmed. */
  person: (i: number) => void;
  /** What a write-back writes once, whatever its people (the packed layout's shared address). */
  batchEnd?: (i: number) => void;
}

type Writes = Record<Exclude<keyof typeof SQLITE_HISTORY_WRITES, 'upsertReverse'>, string> & { upsertReverse: string | null };

/** The writer thread's statements before migration 17, on history_keys, history_counts and history_members. */
const THREE_TABLE_WRITES: Writes = {
  upsertKey: `insert into history_keys (account_id, key, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (account_id, key) do update set first_seen = excluded.first_seen, last_seen = excluded.last_seen,
  country = excluded.country, latitude = excluded.latitude, longitude = excluded.longitude, radius_km = excluded.radius_km, asn = excluded.asn, anonymous = excluded.anonymous`,
  upsertCount: `insert into history_counts (account_id, key, grain, bucket, shard, n) values (?, ?, ?, ?, 0, ?)
  on conflict (account_id, key, grain, bucket, shard) do update set n = excluded.n`,
  upsertMember: `insert into history_members (account_id, key, kind, member, last_seen) values (?, ?, ?, ?, ?)
  on conflict (account_id, key, kind, member) do update set last_seen = excluded.last_seen`,
  deleteMember: 'delete from history_members where account_id = ? and key = ? and kind = ? and member = ?',
  upsertVelocity: SQLITE_HISTORY_WRITES.upsertVelocity,
  upsertReverse: null,
};

/** A file migrated up to `version`, written with `writes`: the rows are the same (HistoryWrite's), the statements differ. */
async function layout(name: string, version: number, writes: Writes): Promise<Layout> {
  const path = join(mkdtempSync(join(tmpdir(), 'risk-layout-')), 'risk.sqlite');
  const parsed = parseDatabaseUrl(`sqlite:${path}`) as DatabaseUrl & { engine: 'sqlite' };
  const engine = openSqlite(parsed);
  await migrate(engine, MIGRATIONS.filter((m) => m.version <= version));
  await engine.close();
  const sqlite = new Sqlite(path);
  sqlite.pragma('synchronous = NORMAL');
  const upsertKey = sqlite.prepare(writes.upsertKey);
  const upsertCount = sqlite.prepare(writes.upsertCount);
  const upsertMember = sqlite.prepare(writes.upsertMember);
  const deleteMember = sqlite.prepare(writes.deleteMember);
  const upsertReverse = writes.upsertReverse === null ? null : sqlite.prepare(writes.upsertReverse);
  return {
    name,
    sqlite,
    person(i) {
      const email = key(`e${i}`), user = key(`u${i}`), device = key(`d${i}`), at = NOW + i;
      upsertKey.run('default', email, at, at, null, null, null, null, null, null);
      upsertKey.run('default', user, at, at, 'GB', null, null, null, 20712, 0);
      upsertKey.run('default', device, at, at, null, null, null, null, null, null);
      upsertCount.run('default', email, 2, HOUR, 1, ...(version > 16 ? [at] : []));
      upsertCount.run('default', device, 1, MINUTE, 1, ...(version > 16 ? [at] : []));
      for (const [k, kind, member] of [[IP, 'a', user], [device, 'a', user], [email, 'd', device], [user, 'd', device], [user, 'c', Buffer.from('GB')]] as const) {
        upsertMember.run('default', k, kind, member, at);
        if (kind === 'a') upsertReverse?.run('default', member, k, at);
      }
      if (i >= 101) deleteMember.run('default', IP, 'a', key(`u${i - 101}`));
    },
  };
}

/**
 * Not a migration: a prototype of a layout with one row per identifier, its counters and set
 * members (and, under a person's key, the addresses and devices whose accounts sets hold them, for
 * erasure) packed in a blob. A new person is then three rows (e-mail, user, device), and the shared
 * address one row a write-back whatever its people (its ~100 accounts and 84 counters, ~3.4 KB,
 * rewritten). The blobs' bytes are the sizes such an encoding would take (a member 16 bytes and a
 * time, a counter a bucket and a count); what the rows cost the writer is what this measures.
 */
async function packed(): Promise<Layout> {
  const path = join(mkdtempSync(join(tmpdir(), 'risk-layout-')), 'risk.sqlite');
  const sqlite = new Sqlite(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.exec(`create table history_packed (
    account_id text not null, key blob not null, first_seen integer, last_seen integer not null,
    country text, latitude real, longitude real, radius_km real, asn integer, anonymous integer, cells blob,
    primary key (account_id, key))`);
  sqlite.exec('create index history_packed_age on history_packed (last_seen)');
  const upsert = sqlite.prepare(`insert into history_packed (account_id, key, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous, cells)
    values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (account_id, key) do update set first_seen = excluded.first_seen, last_seen = excluded.last_seen,
    country = excluded.country, latitude = excluded.latitude, longitude = excluded.longitude, radius_km = excluded.radius_km, asn = excluded.asn,
    anonymous = excluded.anonymous, cells = excluded.cells`);
  const MEMBER = 16 + 8;
  const COUNTER = 4 + 4;
  const blob = (members: number, counters: number) => Buffer.alloc(members * MEMBER + counters * COUNTER, 7);
  return {
    name: 'packed (prototype)',
    sqlite,
    person(i) {
      const email = key(`e${i}`), user = key(`u${i}`), device = key(`d${i}`), at = NOW + i;
      upsert.run('default', email, at, at, null, null, null, null, null, null, blob(1, 1)); // hour counter, a device
      upsert.run('default', user, at, at, 'GB', null, null, null, 20712, 0, blob(2 + 2, 0)); // a device, a country; reverse: the address, the device
      upsert.run('default', device, at, at, null, null, null, null, null, null, blob(1, 1)); // minute counter, an account
    },
    batchEnd(i) {
      upsert.run('default', IP, NOW, NOW + i, null, null, null, null, null, null, blob(101, 84));
    },
  };
}

const LAYOUTS: Record<string, () => Promise<Layout>> = {
  packed,
  'three-tables': () => layout('three tables', 16, THREE_TABLE_WRITES),
  'identity-index': () => layout('identity index', 17, { ...SQLITE_HISTORY_WRITES, upsertReverse: null }),
  'reverse-rows': () => layout('reverse rows', LATEST_VERSION, SQLITE_HISTORY_WRITES),
};
const layouts: Layout[] = [];
for (const entry of options.layouts.split(',')) {
  // `name@pragma=value+pragma=value`: the layout with the writer connection's pragmas set so.
  const [name, pragmas] = entry.split('@') as [string, string | undefined];
  const make = LAYOUTS[name];
  if (make === undefined) throw new Error(`--layouts: ${name} is not one of ${Object.keys(LAYOUTS).join(', ')}`);
  const made = await make();
  for (const pragma of pragmas?.split('+') ?? []) made.sqlite.pragma(pragma);
  layouts.push({ ...made, name: pragmas === undefined ? made.name : `${made.name} (${pragmas})` });
}
const next = new Map(layouts.map((l) => [l, 0]));
const write = (layout: Layout, people: number, batch: number) => {
  const tx = layout.sqlite.transaction((from: number, n: number) => {
    for (let i = from; i < from + n; i++) layout.person(i);
    layout.batchEnd?.(from + n);
  });
  let from = next.get(layout)!;
  for (const end = from + people; from < end; from += batch) tx(from, Math.min(batch, end - from));
  next.set(layout, from);
};

for (const layout of layouts) {
  // Grown in big transactions without waiting for the disk: only the shape of the file matters.
  layout.sqlite.pragma('synchronous = OFF');
  write(layout, PEOPLE, 5_000);
  layout.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  layout.sqlite.pragma('synchronous = NORMAL');
  const size = (layout.sqlite.pragma('page_count', { simple: true }) as number) * (layout.sqlite.pragma('page_size', { simple: true }) as number);
  console.log(`${layout.name}: grown to ${PEOPLE} people, ${Math.round(size / 2 ** 20)} MB`);
}

for (const layout of layouts) {
  layout.sqlite.pragma('wal_autocheckpoint = 0');
  write(layout, 1_000, BATCH);
  const { log } = (layout.sqlite.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]!;
  layout.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  layout.sqlite.pragma('wal_autocheckpoint = 1000');
  console.log(`${layout.name}: ${(log / 1_000).toFixed(1)} WAL frames (pages written) per person, batches of ${BATCH}`);
}

for (let run = 1; run <= Number(options.repeat); run++) {
  const line: string[] = [];
  for (const layout of layouts) {
    const before = process.cpuUsage();
    write(layout, ROWS, BATCH);
    const used = process.cpuUsage(before);
    line.push(`${layout.name} ${Math.round((used.user + used.system) / ROWS)} (system ${Math.round(used.system / ROWS)})`);
  }
  console.log(`run ${run}: CPU µs per person, ${line.join('; ')}`);
}
for (const layout of layouts) {
  layout.sqlite.close();
  // ~200 MB each at the default size: not left in /tmp.
  rmSync(dirname(layout.sqlite.name), { recursive: true, force: true });
}
