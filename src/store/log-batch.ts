import type { LogRecord } from '../core/log-record.js';
import { BatchReader, BatchWriter } from './batch-codec.js';

/**
 * A batch of the evaluation log's records as one binary batch (batch-codec.ts), transferred to the
 * SQLite writer thread. Cloned as objects, each record's fifteen property names and its request and
 * response were walked by the structured clone on the main thread: with one person repeated, the
 * log's `postMessage` was the largest single cost memory added there (bench/rounds.ts --prof, memory
 * on against off: ~15 µs a record), though its strings are copied either way.
 */
export function encodeLogBatch(records: readonly LogRecord[]): Uint8Array {
  let size = 0;
  for (const r of records) size += r.request.length + r.response.length + 256;
  const out = new BatchWriter(size);
  out.number(records.length);
  for (const r of records) {
    out.string(r.id);
    out.string(r.account_id);
    out.string(r.event_type);
    out.string(r.email);
    out.string(r.email_domain);
    out.string(r.ip);
    out.nullableString(r.user_id);
    out.nullableString(r.device_hash);
    out.string(r.state);
    out.number(r.fraud_score);
    out.number(r.rule_set_version);
    out.number(r.fired.length);
    for (const rule of r.fired) out.string(rule);
    out.number(r.unknown?.length ?? 0);
    for (const rule of r.unknown ?? []) out.string(rule);
    out.string(r.request);
    out.string(r.response);
    out.nullableString(r.shadow);
  }
  return out.finish();
}

export function decodeLogBatch(batch: Uint8Array): LogRecord[] {
  const r = new BatchReader(batch);
  const records: LogRecord[] = [];
  const rules = () => Array.from({ length: r.number()! }, () => r.string());
  for (let n = r.number()!; n > 0; n--) {
    records.push({
      id: r.string(),
      account_id: r.string(),
      event_type: r.string(),
      email: r.string(),
      email_domain: r.string(),
      ip: r.string(),
      user_id: r.nullableString(),
      device_hash: r.nullableString(),
      state: r.string(),
      fraud_score: r.number()!,
      rule_set_version: r.number(),
      fired: rules(),
      unknown: rules(),
      request: r.string(),
      response: r.string(),
      shadow: r.nullableString(),
    });
  }
  if (!r.done) throw new Error('log batch: bytes past its last record');
  return records;
}
