import type { LogRecord } from '../core/log-record.js';
import type { WebhookEvent } from './webhook-endpoints.js';

/**
 * The webhook events an evaluation raises (PRODUCT.md "Review"): `review.opened` when it answered
 * `review` (its review item opens), `evaluation.declined` when it answered `decline`. Built and
 * queued by the log writer, in the batch that writes the evaluation (both engines), so the request
 * path does no more work and an event exists exactly when its evaluation does; queued only for the
 * account's endpoints that are on and take the event (a join in the same statement). The body
 * carries ids, not the person's data: the receiver reads the rest with GET /v1/risk/evaluations/{id}.
 */
export function evaluationEvent(record: LogRecord, at: number): { type: WebhookEvent; payload: string } | null {
  const type: WebhookEvent | null = record.state === 'review' ? 'review.opened' : record.state === 'decline' ? 'evaluation.declined' : null;
  if (type === null) return null;
  const timestamp = new Date(at).toISOString();
  const data = { evaluation_id: record.id, event_type: record.event_type, user_id: record.user_id, state: record.state, fraud_score: record.fraud_score, evaluated_at: timestamp };
  return { type, payload: JSON.stringify({ type, timestamp, data }) };
}

/** The events each account's endpoints that are on take (`events` is comma-separated), by account. */
export function subscriptions(rows: ReadonlyArray<{ account_id: string; events: string }>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const row of rows) {
    let events = out.get(row.account_id);
    if (events === undefined) out.set(row.account_id, (events = new Set()));
    for (const event of row.events.split(',')) events.add(event);
  }
  return out;
}

/** The SQLite statement (a join: one delivery per endpoint that is on and takes the event). */
export const SQLITE_QUEUE_EVENT = `insert into webhook_deliveries (id, account_id, endpoint_id, type, payload, status, attempts, next_attempt_at, created_at)
  select 'msg_' || lower(hex(randomblob(16))), account_id, id, ?, ?, 'pending', 0, ?, ? from webhook_endpoints
  where account_id = ? and enabled = 1 and instr(',' || events || ',', ',' || ? || ',') > 0`;
