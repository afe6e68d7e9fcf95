import type { Generated } from 'kysely';

/**
 * The tables, as the query layer sees them (one Kysely interface for both engines). Times are
 * integer milliseconds since the epoch on both engines (`bigint` in PostgreSQL, read back as
 * numbers), so one query reads the same on either; JSON columns are `jsonb` in PostgreSQL (`json`
 * for the evaluation log's documents, kept as the exact text) and text in SQLite (see `json.ts`).
 */
export interface Database {
  /** Values kept once per store: what was imported, and later the history HMAC secret. */
  settings: { name: string; value: string };
  /** One row; bumped in the transaction of every change replicas must see (keys, accounts, rule sets). */
  store_revision: { id: number; revision: number };
  accounts: AccountRow;
  api_keys: ApiKeyRow;
  rule_set_versions: RuleSetVersionRow;
  audit_log: AuditRow;
  evaluations: EvaluationRow;
  history_keys: HistoryKeyRow;
  history_counts: HistoryCountRow;
  history_members: HistoryMemberRow;
  history_velocity: HistoryVelocityRow;
  /** SQLite only (migration 19): what the three tables above hold on PostgreSQL, one row an identifier. */
  history_packed: HistoryPackedRow;
  list_entries: ListEntryRow;
  labels: LabelRow;
  evaluation_rules: EvaluationRuleRow;
  evaluation_hours: EvaluationHourRow;
  rule_hours: RuleHourRow;
  users: UserRow;
  memberships: MembershipRow;
  sessions: SessionRow;
  admin_tokens: AdminTokenRow;
  login_throttle: LoginThrottleRow;
  backtests: BacktestRow;
  rule_set_shadows: RuleSetShadowRow;
  totp_factors: TotpFactorRow;
  recovery_codes: RecoveryCodeRow;
  review_items: ReviewItemRow;
  webhook_deliveries: WebhookDeliveryRow;
  webhook_endpoints: WebhookEndpointRow;
  webhook_attempts: WebhookAttemptRow;
}

export type AccountStatus = 'active' | 'disabled';

export interface AccountRow {
  /** Stable, chosen at creation (`default`, `acme`): the id in the API, the CLI and every other table. */
  id: string;
  name: string;
  status: AccountStatus;
  /** How many keys `API_KEYS` held at the last start that used it (the `default` account only). */
  env_keys: number;
  created_at: number;
}

export interface ApiKeyRow {
  /** `key_` and the first 12 hex digits of the hash: non-secret, shown in lists and the audit log. */
  id: string;
  account_id: string;
  /** `sha256:<hex>` of the key; the key itself is never stored. */
  hash: string;
  /** The key's first characters (`rk_Ab3dE9`), to recognise it; null for keys imported as hashes. */
  prefix: string | null;
  created_at: number;
  created_by: string;
  last_used_at: number | null;
  revoked_at: number | null;
}

export type RuleSetStatus = 'draft' | 'published' | 'archived';

export interface RuleSetVersionRow {
  /** Store-wide id: what the evaluation log records as the version that decided. */
  id: Generated<number>;
  account_id: string;
  event_type: string;
  /** 1, 2, 3… per account and event type. */
  version: number;
  status: RuleSetStatus;
  /** The rule file, exactly as written: the exchange format, validated by src/rules before it is stored. */
  yaml: string;
  author: string;
  comment: string | null;
  created_at: number;
  published_at: number | null;
}

export interface AuditRow {
  id: Generated<number>;
  at: number;
  /** `cli:alice`, `system`, later `user:<id>` or `token:<id>`. */
  actor: string;
  account_id: string | null;
  /** `account.create`, `key.create`, `key.revoke`, `rule_set.publish`… */
  action: string;
  target: string | null;
  /** JSON, never a secret (no key, no key hash). */
  before: unknown;
  after: unknown;
}

export interface EvaluationRow {
  /** The evaluation id (UUIDv7): its first 48 bits are `evaluated_at`, so it sorts and prunes by time. */
  id: string;
  account_id: string;
  evaluated_at: number;
  event_type: string;
  /** The normalised address, lower-cased: what a search by e-mail compares. */
  email: string;
  email_domain: string;
  /** The address as 32 hex digits (IPv4 as ::ffff:a.b.c.d), so an exact IP and a CIDR range are index look-ups. */
  ip_key: string;
  user_id: string | null;
  device_hash: string | null;
  state: string;
  fraud_score: number;
  /** `rule_set_versions.id` of the rule set that decided. */
  rule_set_version: number | null;
  /** The request as validated: e-mail and IP as sent, user, device_intelligence. */
  request: unknown;
  /**
   * The answer exactly as sent: the facts as they were (email, ip, later history), score, signals,
   * dry_run, unavailable. A replay takes the checks that could not run from `unavailable` without
   * its `rule:` entries (those name rules of the rule set that decided, not missing facts).
   */
  response: unknown;
  /** The shadow rule set's outcome (src/evaluation/shadow.ts `ShadowOutcome`, JSON); null when none ran. */
  shadow: unknown;
}

export type ReviewStatus = 'open' | 'claimed' | 'resolved';
export type ReviewResolution = 'approve' | 'decline';

/** An evaluation answered `review`, held until resolved (migration 11). */
export interface ReviewItemRow {
  account_id: string;
  evaluation_id: string;
  event_type: string;
  user_id: string | null;
  /** The normalised address, as the evaluation log keeps it. */
  email: string;
  /** The evaluation's time. */
  opened_at: number;
  status: ReviewStatus;
  /** `user:<id>` or `token:<id>` while claimed, and the last claimant once resolved. */
  assignee: string | null;
  claimed_at: number | null;
  resolution: ReviewResolution | null;
  reason: string | null;
  resolved_by: string | null;
  resolved_at: number | null;
}

/** An account's webhook endpoint (migration 11). */
export interface WebhookEndpointRow {
  /** `whe_` and 16 hex digits. */
  id: string;
  account_id: string;
  url: string;
  /** The event types it takes, comma-separated. */
  events: string;
  /** `whsec_…`, sealed under WEBHOOK_SECRET_KEY when it is set (src/store/webhook-secret-box.ts): signing needs it back. */
  secret: string;
  /** The secret before the last rotation, valid (signed with too) until `previous_until`; sealed alike. */
  previous_secret: string | null;
  previous_until: number | null;
  created_by: string;
  created_at: number;
  /** 1, or 0 when switched off (migration 14): nothing is queued for it, and what was pending failed. */
  enabled: number;
}

/** One attempt at a webhook delivery (migration 14), for the delivery log. */
export interface WebhookAttemptRow {
  delivery_id: string;
  /** 1, 2, …: the delivery's attempt count after it. */
  attempt: number;
  account_id: string;
  endpoint_id: string | null;
  started_at: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  /** The start of the receiver's answer (at most 1 KiB). */
  response: string | null;
}

/** A webhook delivery queued (migration 11). */
export interface WebhookDeliveryRow {
  /** `msg_…`: the `webhook-id` the receiver deduplicates by, the same on every attempt. */
  id: string;
  account_id: string;
  endpoint_id: string | null;
  type: string;
  /** The body, exactly as signed and sent. */
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  /** The replica sending it now, until `lease_until`; after that another may take it. */
  lease_owner: string | null;
  lease_until: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
  /** A delivery sent again (migration 14) names the one it repeats. */
  resent_from: string | null;
}

/** The shadow of an account's event type (migration 9): a rule file evaluated beside the live one, never answered. */
export interface RuleSetShadowRow {
  account_id: string;
  event_type: string;
  /** `rule_set_versions.id` of the version it started from (no foreign key: a draft discarded while in shadow keeps running as it was). */
  rule_set_version: number;
  /** Its number (`rule_set_versions.version`), what the shadow outcome and the API name it by. */
  version: number;
  /** The version's text when the shadow started: what runs, whatever the draft becomes. */
  yaml: string;
  started_by: string;
  started_at: number;
}

/** Where a user's last event was: country, position and its radius, network, anonymity (null on other identifiers). */
interface PlaceColumns {
  country: string | null;
  latitude: number | null;
  longitude: number | null;
  radius_km: number | null;
  asn: number | null;
  anonymous: number | null;
}

/** One identifier's row (migration 3): a keyed hash, never the identifier itself. */
export interface HistoryKeyRow extends PlaceColumns {
  account_id: string;
  key: Buffer;
  first_seen: number;
  last_seen: number;
}

/** Velocity counters (migration 12, src/history/velocity.ts): events per key, series and bucket. */
export interface HistoryVelocityRow {
  account_id: string;
  key: Buffer;
  /** The counter's series: a digest of its key, grain and event types. */
  series: string;
  /** Buckets of the series' grain (1, 60 or 1,440 minutes) since the epoch. */
  bucket: number;
  shard: number;
  n: number;
  /** The minute from which no window reads it (pruned). */
  expires: number;
}

/**
 * SQLite's history (migration 19; src/store/history-packed.ts): an identifier's own columns (first
 * and last seen, a user's last place; null for an IP), its counters and set members packed in
 * `cells`, and under a person's key the addresses and devices whose accounts sets hold them in
 * `reverse` (erasure's). `oldest`: the earliest time in the row past which something is pruned.
 */
export interface HistoryPackedRow extends PlaceColumns {
  account_id: string;
  key: Buffer;
  first_seen: number | null;
  last_seen: number | null;
  cells: Buffer | null;
  reverse: Buffer | null;
  oldest: number | null;
}

export interface HistoryCountRow {
  account_id: string;
  key: Buffer;
  /** 1: per minute, 2: per hour. */
  grain: number;
  /** Minutes or hours since the epoch. */
  bucket: number;
  /** PostgreSQL spreads a busy counter over a few rows (0–7); SQLite writes 0. */
  shard: number;
  n: number;
}

export interface HistoryMemberRow {
  account_id: string;
  key: Buffer;
  /** `a` accounts, `d` devices, `c` countries. */
  kind: string;
  member: Buffer;
  last_seen: number;
}

export type ListName = 'block' | 'allow';
export type ListKind = 'email' | 'domain' | 'ip' | 'device' | 'user';

export interface ListEntryRow {
  id: Generated<number>;
  account_id: string;
  list: ListName;
  kind: ListKind;
  /** Normalised: e-mail and domain lower case, an IP or CIDR in canonical text. */
  value: string;
  reason: string;
  author: string;
  created_at: number;
  expires_at: number | null;
}

export type Label = 'fraud' | 'legit';

export interface LabelRow {
  account_id: string;
  evaluation_id: string;
  label: Label;
  reason: string | null;
  author: string;
  created_at: number;
}

/** A rule that fired (live or dry-run) in a logged evaluation (migration 6). */
export interface EvaluationRuleRow {
  account_id: string;
  /** The rule's id in its rule set: a library id or a custom rule's id. */
  rule_id: string;
  evaluation_id: string;
}

/** Evaluations logged per account, event type and hour (migration 13). */
export interface EvaluationHourRow {
  account_id: string;
  event_type: string;
  /** The hour's first millisecond (Unix ms). */
  hour: number;
  evaluations: number;
}

/** How often a rule fired and was unknown per account, event type and hour (migration 13). */
export interface RuleHourRow {
  account_id: string;
  event_type: string;
  hour: number;
  rule_id: string;
  fired: number;
  unknown: number;
}

export type UserStatus = 'active' | 'disabled';
/** A role in one account (PRODUCT.md "Admin API and console"). */
export type AccountRole = 'admin' | 'analyst';

export interface UserRow {
  /** `usr_` and 16 random hex digits: what the audit log and the API name a user by. */
  id: string;
  /** Lower-cased. */
  email: string;
  /** `scrypt$N$r$p$salt$hash` (src/admin/password.ts): the parameters travel with the hash. */
  password_hash: string;
  /** 1 after a one-time password was issued: the user must choose their own before anything else. */
  password_change_required: number;
  /** 1 for an instance owner, who manages accounts and users and acts as admin in every account. */
  owner: number;
  status: UserStatus;
  created_at: number;
  created_by: string;
  /** 1: an owner requires two-factor of this user (migration 0015), besides TWO_FACTOR_REQUIRED. */
  two_factor_required: number;
}

/** A user's TOTP authenticator (migration 0011). */
export interface TotpFactorRow {
  user_id: string;
  /** Base32, as the authenticator app holds it. */
  secret: string;
  created_at: number;
  /** Null until a code proved the enrolment; only a confirmed factor is asked for at login. */
  confirmed_at: number | null;
  /** The RFC 6238 time step of the last code accepted; that step and earlier ones are refused. */
  last_step: number;
}

export interface RecoveryCodeRow {
  user_id: string;
  /** `sha256:<hex>` of the code. */
  code_hash: string;
  used_at: number | null;
}

export interface MembershipRow {
  user_id: string;
  account_id: string;
  role: AccountRole;
  created_at: number;
}

export interface SessionRow {
  /** `sha256:<hex>` of the session id; the id itself is only in the user's cookie. */
  id_hash: string;
  user_id: string;
  created_at: number;
  /** Written at most once a minute per session (idle expiry is counted from it). */
  last_seen_at: number;
}

export type AdminTokenRole = 'owner' | AccountRole;

export interface AdminTokenRow {
  /** `tok_` and the first 12 hex digits of the hash. */
  id: string;
  name: string;
  /** `sha256:<hex>` of the token; the token itself is shown once, when made. */
  hash: string;
  /** The token's first characters, to recognise it. */
  prefix: string;
  /** The account it acts on; null for an instance-wide (`owner`) token. */
  account_id: string | null;
  role: AdminTokenRole;
  created_at: number;
  created_by: string;
  expires_at: number | null;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface LoginThrottleRow {
  key: string;
  failures: number;
  window_started_at: number;
}

export type BacktestStatus = 'running' | 'done' | 'failed' | 'cancelled';

/** A backtest started through the admin API (migration 8): what was asked, and once it ended, its report. */
export interface BacktestRow {
  /** `bt_` and 16 random hex digits. */
  id: string;
  account_id: string;
  event_type: string;
  status: BacktestStatus;
  since: number;
  until: number;
  /** The candidate rule file, as tested. */
  yaml: string;
  /** The stored version it came from (`rule_set_versions.version`); null for a file sent as text. */
  rule_set_version: number | null;
  created_by: string;
  created_at: number;
  finished_at: number | null;
  /** JSON `{ evaluations, replayed, skipped }`: zero when it starts, the counts when it ends. */
  progress: string;
  /** The report (src/backtest/report.ts), JSON; null until it is done. */
  report: unknown;
  error: string | null;
}
