/**
 * One evaluation as the request path hands it to the log: references to values it already has,
 * and the request and response already serialised (the response is the string that was sent, so
 * logging costs no second JSON.stringify of it). Derived columns are computed by the writer, off
 * the request path.
 */
export interface LogRecord {
  id: string;
  account_id: string;
  event_type: string;
  /** Normalised address (lower-cased by the writer). */
  email: string;
  email_domain: string;
  /** Canonical text of the address (IPv4-mapped IPv6 already read as IPv4). */
  ip: string;
  user_id: string | null;
  device_hash: string | null;
  state: string;
  fraud_score: number;
  rule_set_version: number | null;
  /** Ids of the rules that fired, live and dry-run: one row each in `evaluation_rules`. */
  fired: string[];
  /** Ids of the rules whose input was unknown (`rule:<id>` in `unavailable`): counted per hour (migration 13). */
  unknown?: string[];
  request: string;
  response: string;
  /** The shadow rule set's outcome as JSON (ShadowOutcome); null when none ran. */
  shadow: string | null;
}
