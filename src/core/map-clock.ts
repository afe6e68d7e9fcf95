/**
 * What the clock does with the entry under its cursor: leave it where it is (it cannot go now),
 * give it a second chance (the visitor has unmarked it: it moves to the newest end), or evict it
 * (the visitor has freed what it held).
 */
export type ClockVerdict = 'skip' | 'again' | 'evict';

/**
 * Second-chance eviction over a Map's insertion order, a little at a time: a cursor (a live Map
 * iterator, kept from one call to the next) walks from the oldest end; an entry marked since the
 * cursor last passed it moves to the newest end instead of going (near enough least recently used,
 * without moving an entry on every hit). Each call walks at most `limit` entries while `more()`,
 * and wraps round at most once. The cursor never walks an empty slot twice: a Map keeps the slots
 * of deleted entries until it is rehashed, and a walk from the oldest end on every call would step
 * over all of them. Used by the local counts, where a pass over thousands of entries within one
 * event held the event loop (bench/rounds.ts); SQLite history's memory, slots since, has a clock
 * of its own over them (src/store/history-sqlite.ts).
 */
export function mapClock<K, V>(map: Map<K, V>, visit: (key: K, value: V) => ClockVerdict) {
  let cursor = map.entries();
  return (limit: number, more: () => boolean): void => {
    let wrapped = false;
    for (let walked = 0; walked < limit && more(); walked += 1) {
      let next = cursor.next();
      if (next.done) {
        // Past the newest end: round again from the oldest, once per call.
        if (wrapped) return;
        wrapped = true;
        cursor = map.entries();
        next = cursor.next();
        if (next.done) return;
      }
      const [key, value] = next.value;
      const verdict = visit(key, value);
      if (verdict === 'skip') continue;
      map.delete(key);
      if (verdict === 'again') map.set(key, value);
    }
  };
}
