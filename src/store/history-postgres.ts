import type pg from 'pg';
import { SET_KEEP } from '../history/caps.js';
import type { HistoryEvent, Prior } from '../history/event.js';
import type { HistoryStore } from '../history/store.js';
import { postgresMaintenance, type HistoryMaintenanceOptions } from './history-maintenance.js';

/**
 * PostgreSQL: one statement per evaluation records the event and reads what came before it. Its
 * data-modifying CTEs add to the cells (counters +1, a member's last-seen time, an identifier's
 * first and last seen, a user's place); the final SELECT runs on the snapshot taken before them, so it
 * reads the history without this event, which `historyFacts` then counts in. Every change only adds
 * up (sums, greatest, least), so replicas recording together never lose one another's events;
 * rows are locked in one order (counters, members, identifiers; by key within each), so two such
 * statements never deadlock. A named statement: parsed and planned once per pooled connection.
 */
/**
 * A member's or an identifier's last-seen time is refreshed at most once a minute: windows are
 * hours and days long, and a busy address's statements then do not all wait for one row's lock.
 * (A user's row is written at every event: it holds the place of the previous one.)
 */
const REFRESH_MS = 60_000;

/** Counters are spread over this many rows per bucket, for the same reason; a read sums them. */
const SHARDS = 8;

const RECORD = `
with
counts as (
  insert into history_counts as h (account_id, key, grain, bucket, shard, n)
  select $1, v.key, v.grain, v.bucket, $20::integer, 1
  from (values ($7::bytea, 1, $3::integer), ($7::bytea, 2, $4::integer), ($8::bytea, 2, $4::integer), ($10::bytea, 1, $3::integer)) v(key, grain, bucket)
  where v.key is not null
  order by v.key, v.grain
  on conflict (account_id, key, grain, bucket, shard) do update set n = h.n + 1
),
sets(key, kind, member) as (
  values ($7::bytea, 'a', $9::bytea), ($10::bytea, 'a', $9::bytea), ($8::bytea, 'd', $10::bytea), ($11::bytea, 'd', $10::bytea), ($11::bytea, 'c', $12::bytea)
),
members as (
  insert into history_members (account_id, key, kind, member, last_seen)
  select $1, s.key, s.kind, s.member, $2 from sets s
  where s.key is not null and s.member is not null
  order by s.key, s.kind, s.member
  on conflict (account_id, key, kind, member) do nothing
),
members_seen as (
  update history_members h set last_seen = $2
  from sets s
  where s.key is not null and s.member is not null
    and h.account_id = $1 and h.key = s.key and h.kind = s.kind and h.member = s.member and h.last_seen < $2 - ${REFRESH_MS}
),
trimmed as (
  delete from history_members h
  using sets s, lateral (
    select o.member from history_members o
    where o.account_id = $1 and o.key = s.key and o.kind = s.kind and o.member <> s.member
    order by o.last_seen desc offset $19
  ) old
  where s.key is not null and s.member is not null
    and h.account_id = $1 and h.key = s.key and h.kind = s.kind and h.member = old.member
),
keys as (
  insert into history_keys (account_id, key, first_seen, last_seen)
  select $1, v.key, $2, $2 from (values ($8::bytea), ($10::bytea)) v(key)
  where v.key is not null
  order by v.key
  on conflict (account_id, key) do nothing
),
keys_seen as (
  update history_keys h set last_seen = $2
  where h.account_id = $1 and h.key in ($8::bytea, $10::bytea) and h.last_seen < $2 - ${REFRESH_MS}
),
user_key as (
  insert into history_keys as h (account_id, key, first_seen, last_seen, country, latitude, longitude, radius_km, asn, anonymous)
  select $1, $11::bytea, $2, $2, $13, $14, $15, $16, $17, $18
  where $11::bytea is not null
  on conflict (account_id, key) do update set
    first_seen = least(h.first_seen, excluded.first_seen),
    last_seen = greatest(h.last_seen, excluded.last_seen),
    country = case when excluded.last_seen >= h.last_seen then excluded.country else h.country end,
    latitude = case when excluded.last_seen >= h.last_seen then excluded.latitude else h.latitude end,
    longitude = case when excluded.last_seen >= h.last_seen then excluded.longitude else h.longitude end,
    radius_km = case when excluded.last_seen >= h.last_seen then excluded.radius_km else h.radius_km end,
    asn = case when excluded.last_seen >= h.last_seen then excluded.asn else h.asn end,
    anonymous = case when excluded.last_seen >= h.last_seen then excluded.anonymous else h.anonymous end
)
select
  (select coalesce(sum(n), 0) from history_counts where account_id = $1 and key = $7 and grain = 1 and bucket > $3::integer - 60) as ip_minutes,
  (select coalesce(sum(n), 0) from history_counts where account_id = $1 and key = $7 and grain = 2 and bucket > $4::integer - 24) as ip_hours,
  (select count(*) from (select 1 from history_members where account_id = $1 and key = $7 and kind = 'a' and last_seen >= $5 limit $19) s) as ip_accounts,
  (select last_seen from history_members where account_id = $1 and key = $7 and kind = 'a' and member = $9) as ip_accounts_current,
  (select coalesce(sum(n), 0) from history_counts where account_id = $1 and key = $8 and grain = 2 and bucket > $4::integer - 24) as email_hours,
  (select first_seen from history_keys where account_id = $1 and key = $8) as email_first_seen,
  (select count(*) from (select 1 from history_members where account_id = $1 and key = $8 and kind = 'd' and last_seen >= $6 limit $19) s) as email_devices,
  (select last_seen from history_members where account_id = $1 and key = $8 and kind = 'd' and member = $10) as email_devices_current,
  (select coalesce(sum(n), 0) from history_counts where account_id = $1 and key = $10 and grain = 1 and bucket > $3::integer - 60) as device_minutes,
  (select first_seen from history_keys where account_id = $1 and key = $10) as device_first_seen,
  (select count(*) from (select 1 from history_members where account_id = $1 and key = $10 and kind = 'a' and last_seen >= $6 limit $19) s) as device_accounts,
  (select last_seen from history_members where account_id = $1 and key = $10 and kind = 'a' and member = $9) as device_accounts_current,
  u.first_seen as user_first_seen, u.last_seen as user_last_seen, u.country as user_country, u.latitude as user_latitude,
  u.longitude as user_longitude, u.radius_km as user_radius_km, u.asn as user_asn, u.anonymous as user_anonymous,
  (select count(*) from (select 1 from history_members where account_id = $1 and key = $11 and kind = 'd' and last_seen >= $6 limit $19) s) as user_devices,
  (select last_seen from history_members where account_id = $1 and key = $11 and kind = 'd' and member = $10) as user_devices_current,
  (select count(*) from (select 1 from history_members where account_id = $1 and key = $11 and kind = 'c' and last_seen >= $5 limit $19) s) as user_countries,
  (select last_seen from history_members where account_id = $1 and key = $11 and kind = 'c' and member = $12) as user_countries_current,
  exists (select 1 from history_members where account_id = $1 and key = $11 and kind = 'd') as user_has_devices,
  exists (select 1 from history_members where account_id = $1 and key = $11 and kind = 'c') as user_has_countries
from (select 1) one
left join history_keys u on u.account_id = $1 and u.key = $11
`;

type Row = Record<string, number | string | boolean | null>;

/**
 * The server ends a history statement that has run this long (its connections' statement_timeout):
 * five times the evaluation's wait, at least 1 s (1 s at the default 200 ms). Long enough for one
 * that only queued behind a hot identifier's row locks to land (the event counted, though its
 * answer went without history); short enough that under a lock stall the statements the clients
 * gave up on end on the server too, instead of piling up until max_connections.
 */
export function historyStatementTimeoutMs(stepTimeoutMs: number): number {
  return Math.max(1_000, 5 * stepTimeoutMs);
}

/** The client's own limit, past the server's: only for a server or network that does not answer at all. */
const CLIENT_GRACE_MS = 1_000;

/**
 * `pool` for erasure and pruning (batches that may take a while); `recordPool` for the statement of
 * every evaluation, its connections opened with statement_timeout (historyStatementTimeoutMs).
 */
export function postgresHistory(pool: pg.Pool, recordPool: pg.Pool, options: HistoryMaintenanceOptions & { stepTimeoutMs: number }): HistoryStore {
  const queryTimeoutMs = historyStatementTimeoutMs(options.stepTimeoutMs) + CLIENT_GRACE_MS;
  const maintenance = postgresMaintenance(pool, options);
  let failed = 0;
  return {
    async record(event: HistoryEvent): Promise<Prior> {
      const p = event.place;
      const result = recordPool.query<Row>({
        name: 'history_record',
        text: RECORD,
        values: [
          event.account, event.at, event.minute, event.hour, event.since24h, event.since30d,
          event.ip, event.email, event.identity, event.device, event.user, event.country,
          p.country, p.latitude, p.longitude, p.radiusKm, p.asn, flag(p.anonymous), SET_KEEP, Math.floor(Math.random() * SHARDS),
        ],
        query_timeout: queryTimeoutMs,
      } as pg.QueryConfig);
      try {
        return priorOf((await result).rows[0]!, event);
      } catch (error) {
        failed += 1;
        throw error;
      }
    },
    erase: maintenance.erase,
    prune: maintenance.prune,
    stats: () => ({ failed, pruned: maintenance.pruned() }),
    async close() {
      await recordPool.end();
    },
  };
}

/** A boolean that may be unknown, as the nullable integer column holds it. */
const flag = (value: boolean | null): number | null => (value === null ? null : value ? 1 : 0);
const n = (value: Row[string] | undefined): number => (value === null || value === undefined ? 0 : Number(value));
const seen = (value: Row[string] | undefined): number | null => (value === null || value === undefined ? null : Number(value));

function priorOf(r: Row, event: HistoryEvent): Prior {
  return {
    ip: { minutes: n(r.ip_minutes), hours: n(r.ip_hours), accounts: { count: n(r.ip_accounts), current: seen(r.ip_accounts_current) } },
    email: { hours: n(r.email_hours), firstSeen: seen(r.email_first_seen), devices: { count: n(r.email_devices), current: seen(r.email_devices_current) } },
    device: event.device === null ? null : {
      minutes: n(r.device_minutes),
      firstSeen: seen(r.device_first_seen),
      accounts: { count: n(r.device_accounts), current: seen(r.device_accounts_current) },
    },
    user: event.user === null ? null : {
      firstSeen: seen(r.user_first_seen),
      lastSeen: seen(r.user_last_seen),
      place: r.user_last_seen === null ? null : {
        country: r.user_country as string | null,
        latitude: seen(r.user_latitude),
        longitude: seen(r.user_longitude),
        radiusKm: seen(r.user_radius_km),
        asn: seen(r.user_asn),
        anonymous: r.user_anonymous === null || r.user_anonymous === undefined ? null : n(r.user_anonymous) === 1,
      },
      devices: { count: n(r.user_devices), current: seen(r.user_devices_current) },
      countries: { count: n(r.user_countries), current: seen(r.user_countries_current) },
      baseline: { devices: r.user_has_devices === true, countries: r.user_has_countries === true },
    },
  };
}
