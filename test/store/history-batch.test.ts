import { createHash } from 'node:crypto';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { decodeHistoryBatch, HistoryBatchEncoder } from '../../src/store/history-batch.js';
import type { HistoryWrite } from '../../src/store/sqlite-log-worker.js';
import { encodeHistoryWrite } from '../support/history-rows.js';

const key = (s: string) => createHash('sha256').update(s).digest().subarray(0, 16);

/** Rows as the writer thread binds them: Buffers compared by their bytes. */
const plain = (write: HistoryWrite) =>
  Object.fromEntries(Object.entries(write).map(([name, rows]) => [name, (rows as unknown[][]).map((row) => row.map((v) => (v instanceof Uint8Array ? `bytes:${Buffer.from(v).toString('hex')}` : v)))]));

describe('history write-back batch (SQLite writer thread)', () => {
  const write: HistoryWrite = {
    fresh: [['acme', key('u2')], ['acme', key('d2')]],
    keys: [
      ['default', key('e1'), 1_700_000_000_000, 1_700_000_000_500, null, null, null, null, null, null],
      ['acme', key('u1'), 1_700_000_000_000, 1_700_000_000_500, 'GB', 51.5, -0.12, 20.5, 20712, 0],
      ['acme', key('u2'), 1, 2, 'FR', null, null, null, null, 1],
    ],
    counts: [
      ['default', key('e1'), 2, 472_222, 3, 1_700_000_000_500],
      ['default', key('ip'), 1, 28_333_333, 1_200, 1_700_000_000_499],
    ],
    members: [
      ['default', key('ip'), 'a', key('u1'), 1_700_000_000_500],
      ['acme', key('u1'), 'c', Buffer.from('GB'), 1_700_000_000_500],
    ],
    evicted: [['default', key('ip'), 'a', key('u0')]],
    velocity: [['acme', key('u1'), 'signups\u0000by-ip — ü', 28_333_333, 7, 28_333_400]],
  };

  it('decodes the rows it was given, in order, with nulls and non-ASCII text intact', () => {
    const decoded = decodeHistoryBatch(encodeHistoryWrite(write));
    expect(plain(decoded)).toEqual(plain(write));
    expect(Buffer.isBuffer(decoded.members[0]![3])).toBe(true);
  });

  it('says which subjects are fresh (not in the file yet), and a batch without any has none', () => {
    const batch = new HistoryBatchEncoder(8);
    batch.subject('default', key('ip'));
    batch.count(1, 5, 1, 300_000);
    batch.subject('default', key('e9'), true);
    batch.count(2, 0, 1, 300_000);
    expect(plain(decodeHistoryBatch(batch.finish())).fresh).toEqual([['default', `bytes:${key('e9').toString('hex')}`]]);
    expect(decodeHistoryBatch(encodeHistoryWrite({ keys: [], counts: [], members: [], evicted: [], velocity: [] })).fresh).toEqual([]);
  });

  it('writes a key and members given as the SQLite history\'s memory holds them (text of one character a byte) as their bytes', () => {
    const batch = new HistoryBatchEncoder(8);
    batch.subject('default', key('ip').toString('latin1'));
    batch.member('a', key('u1').toString('latin1'), 5);
    batch.evicted('a', key('u0').toString('latin1'));
    const decoded = decodeHistoryBatch(batch.finish());
    expect(plain(decoded).members).toEqual([['default', `bytes:${key('ip').toString('hex')}`, 'a', `bytes:${key('u1').toString('hex')}`, 5]]);
    expect(plain(decoded).evicted).toEqual([['default', `bytes:${key('ip').toString('hex')}`, 'a', `bytes:${key('u0').toString('hex')}`]]);
  });

  it('grows past its first guess, and its buffer is its own: transferred, it is moved, not copied', () => {
    const many: HistoryWrite = { keys: [], counts: [], members: [], evicted: [], velocity: [] };
    for (let i = 0; i < 2_000; i++) many.members.push(['default', key('ip'), 'a', key(`u${i}`), i]);
    const batch = encodeHistoryWrite(many);
    expect(batch.byteLength).toBeGreaterThan(4_096);
    expect(decodeHistoryBatch(batch).members).toHaveLength(2_000);

    const { port1, port2 } = new MessageChannel();
    port1.postMessage(batch, [batch.buffer as ArrayBuffer]);
    expect(batch.byteLength).toBe(0); // detached here: nothing else shared its memory
    const received = receiveMessageOnPort(port2)!.message as Uint8Array;
    expect(decodeHistoryBatch(received).members[1_999]![4]).toBe(1_999);
    port1.close();
  });

  it('is never a slice of the shared pool, however small: transferred, only its own memory moves', () => {
    // One identifier's batch is well under the size Buffer takes from its pool; a pool slice cannot
    // be transferred (and would hand the thread everything else in the pool).
    Buffer.allocUnsafe(8); // the pool's next slice would not start at 0
    const batch = new HistoryBatchEncoder(128); // room for its 65 bytes: it does not grow
    batch.subject('default', key('ip'));
    batch.count(1, 28_333_333, 1, 5);
    const bytes = batch.finish();
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.buffer.byteLength).toBeLessThan(Buffer.poolSize);
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
    expect(bytes.byteLength).toBe(0);
    expect(decodeHistoryBatch(receiveMessageOnPort(port2)!.message as Uint8Array).counts).toHaveLength(1);
    port1.close();
  });

  it('refuses a batch that is cut short or not a batch, instead of writing a wrong row', () => {
    const batch = encodeHistoryWrite(write);
    expect(() => decodeHistoryBatch(batch.subarray(0, batch.length - 3))).toThrow();
    expect(() => decodeHistoryBatch(Uint8Array.of(9))).toThrow(/unknown row tag 9/);
    expect(() => decodeHistoryBatch(Uint8Array.of(2))).toThrow(/before its subject/);
  });
});
