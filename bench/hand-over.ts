/**
 * `npx tsx bench/hand-over.ts`: what handing SQLite history's write-back to the writer thread costs
 * the main thread, per new person (issue 24). The rows a batch of new people makes (an e-mail, a
 * user and a device each, their counters and set members, the shared address's set), sent as the
 * write-back used to send them (nested arrays of values and Buffers, structured-cloned by
 * `postMessage`) and as it sends them now (one binary batch, src/store/history-batch.ts, its
 * ArrayBuffer transferred). Timed on the sending side only, building included; the receiving side
 * is drained untimed. In-process, over a MessageChannel; nothing else runs.
 *
 *   npx tsx bench/hand-over.ts               # batches of 60 people (~1,200 new people a second, 50 ms)
 *   npx tsx bench/hand-over.ts --people 160
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { HistoryBatchEncoder } from '../src/store/history-batch.js';
import type { HistoryWrite } from '../src/store/sqlite-log-worker.js';

const { values: options } = parseArgs({ options: { people: { type: 'string', default: '60' }, batches: { type: 'string', default: '200' }, rounds: { type: 'string', default: '5' } } });
const PEOPLE = Number(options.people);
const BATCHES = Number(options.batches);

const key = (s: string) => createHash('sha256').update(s).digest().subarray(0, 16);
const NOW = Date.now();
const HOUR = Math.floor(NOW / 3_600_000);
const MINUTE = Math.floor(NOW / 60_000);
const IP = key('ip');
// The history holds keys and set members as text, one character a byte: both forms start from it, as takeBatch does.
const people = Array.from({ length: PEOPLE }, (_, i) => ({ email: key(`e${i}`), user: key(`u${i}`), device: key(`d${i}`), userText: key(`u${i}`).toString('latin1'), deviceText: key(`d${i}`).toString('latin1') }));
const GB = 'GB';

/** As the write-back built its message before the binary batch. */
function rows(): HistoryWrite {
  const w: HistoryWrite = { keys: [], counts: [], members: [], evicted: [], velocity: [] };
  for (const p of people) {
    w.keys.push(['default', p.email, NOW, NOW, null, null, null, null, null, null], ['default', p.user, NOW, NOW, 'GB', null, null, null, 20712, 0], ['default', p.device, NOW, NOW, null, null, null, null, null, null]);
    w.counts.push(['default', p.email, 2, HOUR, 1, NOW], ['default', p.device, 1, MINUTE, 1, NOW]);
    w.members.push(
      ['default', p.device, 'a', Buffer.from(p.userText, 'latin1'), NOW], ['default', p.email, 'd', Buffer.from(p.deviceText, 'latin1'), NOW],
      ['default', p.user, 'd', Buffer.from(p.deviceText, 'latin1'), NOW], ['default', p.user, 'c', Buffer.from(GB, 'latin1'), NOW], ['default', IP, 'a', Buffer.from(p.userText, 'latin1'), NOW],
    );
  }
  return w;
}

/** As it builds it now. */
function batch(): Uint8Array {
  const b = new HistoryBatchEncoder(PEOPLE * 3 * 160);
  const seen = (country: string | null, asn: number | null) => ({ firstSeen: NOW, lastSeen: NOW, country, latitude: null, longitude: null, radiusKm: null, asn, anonymous: asn === null ? null : 0 });
  for (const p of people) {
    b.subject('default', p.email); b.key(seen(null, null)); b.count(2, HOUR, 1, NOW); b.member('d', p.deviceText, NOW);
    b.subject('default', p.user); b.key(seen('GB', 20712)); b.member('d', p.deviceText, NOW); b.member('c', GB, NOW);
    b.subject('default', p.device); b.key(seen(null, null)); b.count(1, MINUTE, 1, NOW); b.member('a', p.userText, NOW);
  }
  b.subject('default', IP);
  for (const p of people) b.member('a', p.userText, NOW);
  return b.finish();
}

const { port1, port2 } = new MessageChannel();
for (let round = 1; round <= Number(options.rounds); round++) {
  let cloned = 0;
  let transferred = 0;
  for (let i = 0; i < BATCHES; i++) {
    let t = process.hrtime.bigint();
    port1.postMessage({ type: 'history', write: rows() });
    cloned += Number(process.hrtime.bigint() - t);
    while (receiveMessageOnPort(port2));
    t = process.hrtime.bigint();
    const b = batch();
    port1.postMessage({ type: 'history', batch: b }, [b.buffer as ArrayBuffer]);
    transferred += Number(process.hrtime.bigint() - t);
    while (receiveMessageOnPort(port2));
  }
  const per = (ns: number) => (ns / 1e3 / (BATCHES * PEOPLE)).toFixed(2);
  console.log(`round ${round}: rows built and cloned ${per(cloned)} µs a new person; binary batch built and transferred ${per(transferred)} µs`);
}
port1.close();
