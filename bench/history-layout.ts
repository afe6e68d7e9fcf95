/**
 * `npx tsx bench/history-layout.ts`: what the SQLite history's table layout costs the writer per new
 * person on a grown store (issue 24), and what one b-tree per key would cost instead. Not the
 * service: the write-back statements alone, in this thread, on two files grown to `--people` new
 * people each, then timed alternately in batches of `--batch` (50: what the write-back timer hands
 * the writer at ~1,000 new people a second).
 *
 * - `today`: the real migrations' tables and the writer thread's statements
 *   (src/store/sqlite-log-worker.ts): a new person is 3 identifier rows, 2 counters and 5 set
 *   members in three tables, each row also an entry in its table's primary-key index, which a
 *   16-byte keyed hash places at random: ~14 b-tree pages dirtied per person on a grown store.
 * - `by key`: one table whose primary key starts with (account, key) holds an identifier's row,
 *   its counters and its set members side by side (a prototype: nothing reads it), with the same
 *   secondary indexes (erasure's identity index, pruning's age index): a key's rows share a page.
 *   `by key, without rowid`: the same, the table being its primary key's b-tree (no rowid table
 *   beside it).
 *
 * Printed per layout: WAL frames (b-tree pages written) per person, counted with the automatic
 * checkpoint off; and CPU µs per person (user + system, this process) with it on, as the writer
 * runs, so each page's checkpoint copy is in it too. The file holds ~1 KiB per person, so the
 * default 200,000 people is a file of ~230 MB, past any cache: each new row's leaf is a miss.
 *
 *   npx tsx bench/history-layout.ts                  # 200,000 people, batches of 50, 3 alternations
 *   npx tsx bench/history-layout.ts --people 20000   # a small store: the gap is smaller
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Sqlite from 'better-sqlite3';
import { openSqlite } from '../src/store/sqlite.js';
import { migrate } from '../src/store/migrate.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { parseDatabaseUrl, type DatabaseUrl } from '../src/config/store-url.js';
import { SQLITE_HISTORY_WRITES } from '../src/store/history-sql.js';

const { values: options } = parseArgs({
  options: {
    people: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '50' },
    rows: { type: 'string', default: '5000' },
    repeat: { type: 'string', default: '3' },
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
}

async function today(): Promise<Layout> {
  const path = join(mkdtempSync(join(tmpdir(), 'risk-layout-')), 'risk.sqlite');
  const parsed = parseDatabaseUrl(`sqlite:${path}`) as DatabaseUrl & { engine: 'sqlite' };
  const engine = openSqlite(parsed);
  await migrate(engine, MIGRATIONS);
  await engine.close();
  const sqlite = new Sqlite(path);
  sqlite.pragma('synchronous = NORMAL');
  // The writer thread's own statements (src/store/sqlite-log-worker.ts).
  const upsertKey = sqlite.prepare(SQLITE_HISTORY_WRITES.upsertKey);
  const upsertCount = sqlite.prepare(SQLITE_HISTORY_WRITES.upsertCount);
  const upsertMember = sqlite.prepare(SQLITE_HISTORY_WRITES.upsertMember);
  const deleteMember = sqlite.prepare(SQLITE_HISTORY_WRITES.deleteMember);
  return {
    name: 'today',
    sqlite,
    person(i) {
      const email = key(`e${i}`), user = key(`u${i}`), device = key(`d${i}`), at = NOW + i;
      upsertKey.run('default', email, at, at, null, null, null, null, null, null);
      upsertKey.run('default', user, at, at, 'GB', null, null, null, 20712, 0);
      upsertKey.run('default', device, at, at, null, null, null, null, null, null);
      upsertCount.run('default', email, 2, HOUR, 1);
      upsertCount.run('default', device, 1, MINUTE, 1);
      for (const [k, kind, member] of [[IP, 'a', user], [device, 'a', user], [email, 'd', device], [user, 'd', device], [user, 'c', Buffer.from('GB')]] as const) {
        upsertMember.run('default', k, kind, member, at);
      }
      if (i >= 101) deleteMember.run('default', IP, 'a', key(`u${i - 101}`));
    },
  };
}

function byKey(withoutRowid: boolean): Layout {
  const sqlite = new Sqlite(join(mkdtempSync(join(tmpdir(), 'risk-layout-')), 'risk.sqlite'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // kind: 'k' the identifier's own row, 'n' a counter (sub = grain and bucket), 'a' / 'd' / 'c' a set member (sub = member).
  sqlite.exec(`create table history_cells (account_id text not null, key blob not null, kind text not null, sub blob not null,
      n integer, last_seen integer not null, place text, primary key (account_id, key, kind, sub))${withoutRowid ? ' without rowid' : ''};
    create index history_cells_identity on history_cells (account_id, sub) where kind = 'a';
    create index history_cells_age on history_cells (last_seen);`);
  const put = sqlite.prepare(`insert into history_cells (account_id, key, kind, sub, n, last_seen, place) values (?, ?, ?, ?, ?, ?, ?)
    on conflict (account_id, key, kind, sub) do update set n = excluded.n, last_seen = excluded.last_seen, place = excluded.place`);
  const remove = sqlite.prepare('delete from history_cells where account_id = ? and key = ? and kind = ? and sub = ?');
  const none = Buffer.alloc(0);
  const bucket = (grain: number, b: number) => Buffer.from([grain, (b >>> 24) & 255, (b >>> 16) & 255, (b >>> 8) & 255, b & 255]);
  return {
    name: withoutRowid ? 'by key, without rowid' : 'by key',
    sqlite,
    person(i) {
      const email = key(`e${i}`), user = key(`u${i}`), device = key(`d${i}`), at = NOW + i;
      put.run('default', email, 'k', none, null, at, null);
      put.run('default', user, 'k', none, null, at, 'GB 20712 0');
      put.run('default', device, 'k', none, null, at, null);
      put.run('default', email, 'n', bucket(2, HOUR), 1, at, null);
      put.run('default', device, 'n', bucket(1, MINUTE), 1, at, null);
      for (const [k, kind, member] of [[IP, 'a', user], [device, 'a', user], [email, 'd', device], [user, 'd', device], [user, 'c', Buffer.from('GB')]] as const) {
        put.run('default', k, kind, member, null, at, null);
      }
      if (i >= 101) remove.run('default', IP, 'a', key(`u${i - 101}`));
    },
  };
}

const layouts = [await today(), byKey(false), byKey(true)];
const next = new Map(layouts.map((l) => [l, 0]));
const write = (layout: Layout, people: number, batch: number) => {
  const tx = layout.sqlite.transaction((from: number, n: number) => {
    for (let i = from; i < from + n; i++) layout.person(i);
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
for (const layout of layouts) layout.sqlite.close();
