/**
 * `npx tsx bench/writer.ts`: CPU time the SQLite writer thread spends per evaluation (issue 24), in
 * one process on a fresh store: the evaluation log's rows (log row, fired rule, review item, webhook
 * events, hourly roll-ups) and, apart, the history write-back of a person never seen (three new
 * identifiers, their counters and set members, the shared IP's set trimmed). Measured as the CPU of
 * the writer thread itself (/proc/self/task), so it holds on a busy machine far better than req/s.
 * The real writer thread (src/store/sqlite-log-worker.ts) and the real migrations; `--schema 15`
 * stops before migration 16. `--schema 15,16`: one store and writer thread per version, fed batch
 * after batch in turn, so a schema's before and after share the machine's drift. (The history's
 * write-back is today's, into migration 19's table: with `--schema` below 19, pass `--history false`.)
 *
 *   npx tsx bench/writer.ts                       # 20,000 rows after 20,000 to warm, batches of 500
 *   npx tsx bench/writer.ts --schema 15,16 --endpoint  # versions 15 and 16 side by side; an endpoint takes review.opened
 *   npx tsx bench/writer.ts --batch 50             # 50 people per transaction, as at ~1,000 new people/s
 *   npx tsx bench/writer.ts --mix same --history false  # the log rows of one person repeated, and no history
 *   npx tsx bench/writer.ts --schema 19,19@8192 --batch 100  # today's schema in a file of 4 KiB pages and one of 8 KiB
 *   npx tsx bench/writer.ts --answer approve --history false  # log rows of evaluations nothing fired on: no rule row, no review item
 *   npx tsx bench/writer.ts --answer item --same-size --history false  # the review item alone beside rows of the review's size
 *
 * `--mix`: whose evaluations the log rows are. `new` (default): a new person each (their own e-mail,
 * user and device, so three of the log's indexes take an entry at a random place). `same`: one
 * person repeated (every index entry lands beside the last one). `both`: one, then the other, each
 * on fresh stores. */
import './temp-root.js';
import { mkdtempSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Sqlite from 'better-sqlite3';
import { openSqlite } from '../src/store/sqlite.js';
import { migrate } from '../src/store/migrate.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { openSqliteWriterThread } from '../src/store/sqlite-log-writer.js';
import { parseDatabaseUrl, type DatabaseUrl } from '../src/config/store-url.js';
import type { LogRecord } from '../src/core/log-record.js';
import { HistoryBatchEncoder } from '../src/store/history-batch.js';
import { SET_KEEP } from '../src/history/caps.js';
import { cpuTicksOf } from './settle.js';

const { values: options } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    warm: { type: 'string', default: '20000' },
    schema: { type: 'string', default: String(MIGRATIONS.at(-1)!.version) },
    endpoint: { type: 'boolean', default: false },
    repeat: { type: 'string', default: '3' },
    batch: { type: 'string', default: '500' },
    mix: { type: 'string', default: 'new' },
    history: { type: 'string', default: 'true' },
    answer: { type: 'string', default: 'review' },
    'same-size': { type: 'boolean', default: false },
  },
});
/**
 * People per transaction. 500 is a backlog's batch; at ~1,000 new people a second the history's
 * write-back timer (SQLITE_HISTORY_DEFAULTS.flushDelayMs) hands the writer 50 per 50 ms, and a
 * transaction's cost is mostly its dirty pages, so `--batch 50` is what the service sees then.
 */
const BATCH = Number(options.batch);
const ROWS = Number(options.rows);

/** User + system CPU seconds of one thread of this process (/proc, in ticks of 10 ms: read over many batches). */
function threadCpu(tid: string): number {
  return (cpuTicksOf(`/proc/self/task/${tid}/stat`) ?? 0) / 100; // 0: the thread ended
}

let ms = Date.now() - 3_600_000;
let seq = 0;
/** UUIDv7-shaped, in time order, as the request path makes them. */
function nextId(): string {
  ms += 1;
  const t = ms.toString(16).padStart(12, '0');
  const r = (seq++).toString(16).padStart(15, '0');
  return `${t.slice(0, 8)}-${t.slice(8)}-7${r.slice(0, 3)}-a${r.slice(3, 6)}-${r.slice(3, 15)}`;
}

/**
 * `--answer`: what the writer writes beside each log row. `review` (default): a fired rule's row and
 * a review item, as the service logs an evaluation once the one IP's velocity has fired. `approve`:
 * nothing (nothing fired, as with memory off or below the rule's threshold). `item`: the review
 * item alone; `rule`: the fired rule's row alone. The response is the review's, with its rule's
 * details, unless `approve`, whose response has none; `--same-size` keeps the review's for
 * `approve` too, so only what is written beside the row differs. The review's row here is only a
 * few bytes past half a 4 KiB page (its response 1,558 bytes, the service's 1,673): a shorter one
 * would drop the half-page cliff from the comparison.
 */
const ANSWERS = { review: { state: 'review', fired: true }, approve: { state: 'approve', fired: false }, item: { state: 'review', fired: false }, rule: { state: 'approve', fired: true } } as const;
if (!Object.hasOwn(ANSWERS, options.answer!)) throw new Error(`--answer: review, approve, item or rule, not ${options.answer}`);
const ANSWER = ANSWERS[options.answer as keyof typeof ANSWERS];
const REVIEW_TEXT = options.answer !== 'approve' || options['same-size'];
const DETAILS = REVIEW_TEXT ? '[{"rule_id":"ip_velocity","rule_name":"Many events from this IP address","rule_type":"static","score":25}]' : '[]';

/** Person `i`'s evaluation as the service logs it (`--answer`). */
function logRecord(i: number): LogRecord {
  const id = nextId();
  if (mix === 'same') i = 7;
  const email = `user${i}@mail-bench.example`;
  const at = new Date(ms).toISOString();
  return {
    id, account_id: 'default', event_type: 'account_register', email, email_domain: 'mail-bench.example', ip: '81.2.69.160', user_id: `u-${i}`,
    device_hash: (i + 1).toString(16).padStart(64, '0'), state: ANSWER.state, fraud_score: ANSWER.state === 'review' ? 25 : 0, rule_set_version: 1, fired: ANSWER.fired ? ['ip_velocity'] : [], unknown: [],
    request: JSON.stringify({ ip: '81.2.69.160', email, event_type: 'account_register', user: { user_id: `u-${i}`, first_name: 'Jane', last_name: 'Doe' }, device_intelligence: { device_hash: (i + 1).toString(16).padStart(64, '0') } }),
    response: `{"id":"${id}","event_type":"account_register","score":{"details":${DETAILS},"fraud_score":${REVIEW_TEXT ? 25 : 0},"state":"${REVIEW_TEXT ? 'review' : 'approve'}"},"dry_run":[],"signals":${REVIEW_TEXT ? '["ip_velocity"]' : '[]'},"email":{"address":"${email}","normalized":"${email}","domain":"mail-bench.example","canonical":"${email}","deliverable":true,"deliverability":"deliverable","mx_records":[{"exchange":"mx1.mail-bench.example","priority":10}],"disposable":false,"free_provider":false,"role_account":false,"relay":false,"suggested_domain":null},"ip":{"address":"81.2.69.160","version":4,"embedded_ipv4":null,"transition":null,"country_code":"GB","country":"United Kingdom","region":null,"city":null,"postal_code":null,"latitude":null,"longitude":null,"accuracy_radius_km":null,"time_zone":null,"asn":20712,"as_organization":"Andrews & Arnold Ltd","is_tor":false,"is_proxy":false,"is_datacenter":false,"is_vpn":null,"is_bogon":false},"history":{"ip":{"events_1h":52071,"events_24h":52071,"accounts_24h":100},"email":{"events_24h":1,"devices_30d":1,"first_seen":"${at}"},"device":{"events_1h":1,"accounts_30d":1,"first_seen":"${at}"},"user":{"first_seen":"${at}","new_device":null,"new_country":null,"devices_30d":1,"countries_24h":1,"previous":null},"at_least":["ip.accounts_24h"]},"lists":{"block":[],"allow":[]},"unavailable":["ip.vpn"],"evaluated_at":"${at}","took_ms":0.151}`,
    shadow: null,
  };
}

const key = (s: string) => createHash('sha256').update(s).digest().subarray(0, 16);
const IP = key('ip');
/** Members the IP's accounts set holds in memory, so sends whole every write-back (history-sqlite.ts `touch`). */
const IP_SET = SET_KEEP + 1;
/**
 * A batch of new people's history write-back, as the SQLite history builds it (history-sqlite.ts
 * `takeBatch`): each identifier once, all its rows after it; the three of a new person fresh (the
 * key filter said "not in the file": inserted without a read); the shared IP's accounts set whole,
 * its newest SET_KEEP + 1 (as history-sqlite.ts `touch` trims it), and the members it no longer keeps.
 */
function historyBatch(from: number): Uint8Array {
  const batch = new HistoryBatchEncoder();
  const minute = Math.floor(ms / 60_000);
  const hour = Math.floor(ms / 3_600_000);
  const none = { country: null, latitude: null, longitude: null, radiusKm: null, asn: null, anonymous: null };
  for (let i = from; i < from + BATCH; i++) {
    const email = key(`e${i}`), user = key(`u${i}`), device = key(`d${i}`), at = ms + i;
    batch.subject('default', email, true);
    batch.key({ firstSeen: at, lastSeen: at, ...none });
    batch.count(2, hour, 1, at);
    batch.member('d', device, at);
    batch.subject('default', user, true);
    batch.key({ firstSeen: at, lastSeen: at, ...none, country: 'GB', asn: 20712, anonymous: 0 });
    batch.member('d', device, at);
    batch.member('c', Buffer.from('GB'), at);
    batch.subject('default', device, true);
    batch.key({ firstSeen: at, lastSeen: at, ...none });
    batch.count(1, minute, 1, at);
    batch.member('a', user, at);
  }
  const last = from + BATCH;
  batch.subject('default', IP);
  batch.key({ firstSeen: ms - 3_600_000, lastSeen: ms, ...none, country: 'GB', asn: 20712, anonymous: 0 });
  batch.count(1, minute, last, ms + last);
  batch.count(2, hour, last, ms + last);
  for (let i = Math.max(0, last - IP_SET); i < last; i++) batch.member('a', key(`u${i}`), ms + i);
  for (let i = Math.max(0, from - IP_SET); i < last - IP_SET; i++) batch.evicted('a', key(`u${i}`));
  return batch.finish();
}

function database(url: string): DatabaseUrl {
  const parsed = parseDatabaseUrl(url);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

const MIXES = options.mix === 'both' ? ['new', 'same'] : [options.mix];
/** `19` or `19@8192`: a schema version, and the page size its file is made with (SQLite's default 4096 otherwise). */
const SCHEMAS = options.schema.split(',').map((s) => {
  const [version, pageSize] = s.split('@').map(Number);
  return { version: version!, pageSize: pageSize ?? null };
});
let mix = MIXES[0]!;

/** A fresh store at `schema`, and its writer thread with the ids of the threads it started (its CPU is theirs). */
async function openWriter({ version, pageSize }: (typeof SCHEMAS)[number]) {
  const path = join(mkdtempSync(join(tmpdir(), 'risk-writer-')), 'risk.sqlite');
  if (pageSize !== null) {
    // Fixed by the file's first table, before the store turns WAL on (a WAL file's page size cannot change).
    const file = new Sqlite(path);
    file.pragma(`page_size = ${pageSize}`);
    file.exec('create table bench_page_size (x); drop table bench_page_size');
    const made = file.pragma('page_size', { simple: true });
    file.close();
    // SQLite ignores a size it does not take (not a power of two from 512 to 65536) without a word.
    if (made !== pageSize) throw new Error(`page size ${pageSize}: the file was made with ${String(made)}`);
  }
  const schema = pageSize === null ? String(version) : `${version}@${pageSize}`;
  const db = database(`sqlite:${path}`) as DatabaseUrl & { engine: 'sqlite' };
  const engine = openSqlite(db);
  await migrate(engine, MIGRATIONS.filter((m) => m.version <= version));
  await engine.db.insertInto('accounts').values({ id: 'default', name: 'Default', status: 'active', env_keys: 0, created_at: 1 }).execute();
  if (options.endpoint) {
    await engine.db.insertInto('webhook_endpoints').values({ id: 'we_bench', account_id: 'default', url: 'http://127.0.0.1:9/', events: 'review.opened', secret: 'x', previous_secret: null, previous_until: null, created_by: 'bench', created_at: 1, enabled: 1 }).execute();
  }
  await engine.close();
  const before = new Set(readdirSync('/proc/self/task'));
  const thread = await openSqliteWriterThread(db, 1);
  const tids = readdirSync('/proc/self/task').filter((tid) => !before.has(tid));
  return { schema, thread, tids, cpu: () => tids.reduce((sum, tid) => sum + threadCpu(tid), 0) };
}

for (let run = 1; run <= Number(options.repeat) * MIXES.length; run++) {
  mix = MIXES[(run - 1) % MIXES.length]!;
  const writers: Array<Awaited<ReturnType<typeof openWriter>>> = [];
  for (const schema of SCHEMAS) writers.push(await openWriter(schema));
  let person = 0;
  /**
   * Each writer's own next person for the history: its batches follow on from its last (the IP's
   * set trims what its previous batch added); a count shared by the writers taken in turn left
   * each file's IP row growing without bound (found in review).
   */
  const people = writers.map(() => 0);
  /** CPU µs per row of each writer; batch after batch, each writer in turn (the order flips each batch), so the machine's drift falls on all alike. */
  const measure = async (what: 'write' | 'history', rows: number) => {
    const used = writers.map(() => 0);
    for (let b = 0; b < rows; b += BATCH) {
      const order = writers.map((_, i) => i);
      if ((b / BATCH) % 2 === 1) order.reverse();
      for (const i of order) {
        const request = what === 'write'
          ? { type: 'write' as const, records: Array.from({ length: BATCH }, () => logRecord(person++)) }
          : { type: 'history' as const, batch: historyBatch((people[i]! += BATCH) - BATCH) };
        const before = writers[i]!.cpu();
        await writers[i]!.thread.send(request);
        used[i]! += writers[i]!.cpu() - before;
      }
    }
    return used.map((cpu) => (cpu * 1e6) / rows);
  };
  await measure('write', Number(options.warm));
  const log = await measure('write', ROWS);
  let history: number[] = [];
  if (options.history !== 'false') {
    await measure('history', Number(options.warm));
    history = await measure('history', ROWS);
  }
  for (const [i, writer] of writers.entries()) {
    await writer.thread.release();
    const historyText = history.length === 0 ? '' : `; history write-back ${history[i]!.toFixed(1)} CPU µs per new person`;
    console.log(`run ${Math.ceil(run / MIXES.length)} ${mix} (schema ${writer.schema}, batches of ${BATCH}${options.endpoint ? ', an endpoint takes review.opened' : ''}): log ${log[i]!.toFixed(1)} CPU µs per evaluation${historyText}`);
  }
}
