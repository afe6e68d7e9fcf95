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
 * - `reverse rows`: migration 18, no identity index, and with each accounts-set member a reverse
 *   row under the member's own key.
 * - `packed`: today's (every migration, and the writer thread's code, src/store/history-packed.ts):
 *   migration 19, one row an identifier, its cells in a blob.
 *
 * Printed per layout: WAL frames (b-tree pages written) per person, counted with the automatic
 * checkpoint off; and CPU µs per person (user + system, this process) with it on, as the writer
 * runs, so each page's checkpoint copy is in it too. The file holds ~1 KiB per person, so the
 * default 200,000 people is a file of ~200 MB, past any cache: each new row's leaf is a miss.
 *
 *   npx tsx bench/history-layout.ts                  # reverse rows against packed: 200,000 people, batches of 50, 3 alternations
 *   npx tsx bench/history-layout.ts --people 20000   # a small store: the gap is smaller
 *   npx tsx bench/history-layout.ts --layouts three-tables,identity-index,reverse-rows
 *   npx tsx bench/history-layout.ts --layouts reverse-rows --migrate   # grown, then migrated to today's: how long that takes
 *   npx tsx bench/history-layout.ts --layouts reverse-rows,packed --people 50000 --batch 100
 *   npx tsx bench/history-layout.ts --layouts 'reverse-rows,reverse-rows@mmap_size=1073741824+cache_size=-65536'
 *                                                    # the same layout under other pragmas (name@pragma+pragma)
 */
import './temp-root.js';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import Sqlite from 'better-sqlite3';
import { openSqlite } from '../src/store/sqlite.js';
import { migrate } from '../src/store/migrate.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { parseDatabaseUrl, type DatabaseUrl } from '../src/config/store-url.js';
import { packedHistory } from '../src/store/history-packed.js';
import type { HistoryWrite } from '../src/store/sqlite-log-worker.js';

const { values: options } = parseArgs({
  options: {
    people: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '50' },
    rows: { type: 'string', default: '5000' },
    repeat: { type: 'string', default: '3' },
    layouts: { type: 'string', default: 'reverse-rows,packed' },
    migrate: { type: 'boolean', default: false },
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
  /** At the end of a write-back (the packed layout writes its rows then, once each). */
  batchEnd?: () => void;
}

interface Writes { upsertKey: string; upsertCount: string; upsertMember: string; deleteMember: string; upsertReverse: string | null }

/** The writer thread's statements on migration 17's and 18's history_cells (before migration 19). */
const CELLS_WRITES: Writes = {
  upsertKey: `insert into history_cells (account_id, key, kind, sub, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous)
  values (?, ?, 'k', 0, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (account_id, key, kind, sub) do update set first_seen = excluded.first_seen, last_seen = excluded.last_seen,
  country = excluded.country, latitude = excluded.latitude, longitude = excluded.longitude, radius_km = excluded.radius_km, asn = excluded.asn, anonymous = excluded.anonymous`,
  upsertCount: `insert into history_cells (account_id, key, kind, sub, n, last_seen) values (?, ?, case ? when 1 then 'm' else 'h' end, cast(? as integer), ?, ?)
  on conflict (account_id, key, kind, sub) do update set n = excluded.n, last_seen = excluded.last_seen`,
  upsertMember: `insert into history_cells (account_id, key, kind, sub, last_seen) values (?, ?, ?, ?, ?)
  on conflict (account_id, key, kind, sub) do update set last_seen = excluded.last_seen`,
  deleteMember: 'delete from history_cells where account_id = ? and key = ? and kind = ? and sub = ?',
  upsertReverse: `insert into history_cells (account_id, key, kind, sub, last_seen) values (?, ?, 'r', ?, ?)
  on conflict (account_id, key, kind, sub) do update set last_seen = excluded.last_seen`,
};

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
 * Today's (migration 19; src/store/history-packed.ts): one row an identifier, its counters and set
 * members (and, under a person's key, the addresses and devices whose accounts sets hold them) packed
 * in blobs. A write-back's rows are read, changed and written once each, as the writer thread does:
 * a new person is three rows (e-mail, user, device), and the shared address one row a write-back
 * whatever its people (its ~100 accounts and 84 counters).
 */
async function packed(): Promise<Layout> {
  const path = join(mkdtempSync(join(tmpdir(), 'risk-layout-')), 'risk.sqlite');
  const parsed = parseDatabaseUrl(`sqlite:${path}`) as DatabaseUrl & { engine: 'sqlite' };
  const engine = openSqlite(parsed);
  await migrate(engine, MIGRATIONS);
  await engine.close();
  const sqlite = new Sqlite(path);
  sqlite.pragma('synchronous = NORMAL');
  const history = packedHistory(sqlite);
  let write: HistoryWrite = { fresh: [], keys: [], counts: [], members: [], evicted: [], velocity: [] };
  /** The address's accounts-set rows of this write-back, by person: one trimmed in it is not written (as the history's memory leaves it out). */
  let added = new Map<number, unknown[]>();
  return {
    name: 'packed',
    sqlite,
    person(i) {
      const email = key(`e${i}`), user = key(`u${i}`), device = key(`d${i}`), at = NOW + i;
      // The person's keys are new: the main thread's filter says so (history-batch.ts's fresh subjects).
      write.fresh!.push(['default', email], ['default', user], ['default', device]);
      write.keys.push(['default', email, at, at, null, null, null, null, null, null], ['default', user, at, at, 'GB', null, null, null, 20712, 0], ['default', device, at, at, null, null, null, null, null, null]);
      write.counts.push(['default', email, 2, HOUR, 1, at], ['default', device, 1, MINUTE, 1, at], ['default', IP, 1, MINUTE, i, at], ['default', IP, 2, HOUR, i, at]);
      for (const [k, kind, member] of [[IP, 'a', user], [device, 'a', user], [email, 'd', device], [user, 'd', device], [user, 'c', Buffer.from('GB')]] as const) {
        const row = ['default', k, kind, member, at];
        if (k === IP) added.set(i, row);
        else write.members.push(row);
      }
      if (i >= 101 && !added.delete(i - 101)) write.evicted.push(['default', IP, 'a', key(`u${i - 101}`)]);
    },
    batchEnd() {
      write.members.push(...added.values());
      history.write(write);
      write = { fresh: [], keys: [], counts: [], members: [], evicted: [], velocity: [] };
      added = new Map();
    },
  };
}

const LAYOUTS: Record<string, () => Promise<Layout>> = {
  packed,
  'three-tables': () => layout('three tables', 16, THREE_TABLE_WRITES),
  'identity-index': () => layout('identity index', 17, { ...CELLS_WRITES, upsertReverse: null }),
  'reverse-rows': () => layout('reverse rows', 18, CELLS_WRITES),
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
    layout.batchEnd?.();
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

if (options.migrate) {
  // Each grown store migrated to today's schema, timed (wall and this process's CPU), and nothing else.
  for (const layout of layouts) {
    const path = layout.sqlite.name;
    layout.sqlite.close();
    const engine = openSqlite(parseDatabaseUrl(`sqlite:${path}`) as DatabaseUrl & { engine: 'sqlite' });
    const [wall, cpu] = [performance.now(), process.cpuUsage()];
    const { from, to } = await migrate(engine, MIGRATIONS);
    const used = process.cpuUsage(cpu);
    await engine.close();
    console.log(`${layout.name}: migrated ${from} → ${to} in ${((performance.now() - wall) / 1000).toFixed(1)} s (CPU ${((used.user + used.system) / 1e6).toFixed(1)} s)`);
    rmSync(dirname(path), { recursive: true, force: true });
  }
  process.exit(0);
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
