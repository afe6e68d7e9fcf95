import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/core/log-record.js';
import { decodeLogBatch, encodeLogBatch } from '../../src/store/log-batch.js';

const record = (i: number, over: Partial<LogRecord> = {}): LogRecord => ({
  id: `019ac8f0-0000-7000-8000-${String(i).padStart(12, '0')}`,
  account_id: 'default',
  event_type: 'registration',
  email: `Person.${i}@Example.com`,
  email_domain: 'example.com',
  ip: '2001:db8::1',
  user_id: `u${i}`,
  device_hash: null,
  state: 'review',
  fraud_score: 55,
  rule_set_version: 3,
  fired: ['email.disposable', 'ip.tor'],
  unknown: ['rule:dns'],
  request: JSON.stringify({ email: `Person.${i}@Example.com`, ip: '2001:db8::1' }),
  response: JSON.stringify({ fraud_score: 55, reasons: ['ü', '日本', '🙂'] }),
  shadow: null,
  ...over,
});

describe('evaluation log batch (SQLite writer thread)', () => {
  it('gives back the records it was given: nulls, empty lists, text beyond ASCII', () => {
    const records = [
      record(1),
      record(2, { user_id: null, device_hash: 'd'.repeat(64), rule_set_version: null, fired: [], unknown: [], shadow: '{"state":"approve"}', email: 'élodie@exämple.fr' }),
      record(3, { response: 'x'.repeat(100_000) }),
    ];
    expect(decodeLogBatch(encodeLogBatch(records))).toEqual(records);
  });

  it('reads a record without unknown rules as one with none', () => {
    const { unknown, ...without } = record(4);
    void unknown;
    expect(decodeLogBatch(encodeLogBatch([without]))[0]!.unknown).toEqual([]);
  });

  it('refuses a batch cut short, or with bytes past its last record', () => {
    const batch = encodeLogBatch([record(5), record(6)]);
    expect(() => decodeLogBatch(batch.subarray(0, batch.length - 10))).toThrow();
    const longer = new Uint8Array(batch.length + 1);
    longer.set(batch);
    expect(() => decodeLogBatch(longer)).toThrow(/past its last record/);
  });
});
