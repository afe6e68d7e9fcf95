import { describe, expect, it } from 'vitest';
import { PACKED_SQL } from '../../src/store/history-packed.js';
import { SQLITE_HISTORY_READS } from '../../src/store/history-sql.js';
import { withSqlitePlans } from '../support/store.js';

/**
 * SQLite's history one row an identifier (migration 19): every statement that reads, writes,
 * prunes or erases it finds its rows through the primary key, the rowid or the `oldest` index,
 * never by reading the whole table. Pruning walks the index in its order (no sort of the stale rows).
 */
describe('SQLite history statements', () => {
  it('search history_packed by a key, a rowid or an index, never scan it', async () => {
    await withSqlitePlans((plan) => {
      const statements = { ...PACKED_SQL, ...SQLITE_HISTORY_READS };
      let checked = 0;
      for (const [name, text] of Object.entries(statements)) {
        const lines = plan(text, Array.from({ length: (text.match(/\?/g) ?? []).length }, () => 1));
        const found = lines.filter((line) => /\bhistory_(packed|velocity)\b/.test(line));
        for (const line of found) expect(line, `${name}: ${lines.join(' ; ')}`).toMatch(/^SEARCH history_(packed|velocity) /);
        checked += found.length;
      }
      expect(checked).toBeGreaterThanOrEqual(7);
      expect(plan(PACKED_SQL.read, ['acme', Buffer.alloc(16)]).join(' ; ')).toMatch(/\(account_id=\? AND key=\?\)/);
      expect(plan(PACKED_SQL.update, Array.from({ length: 12 }, () => 1)).join(' ; ')).toMatch(/INTEGER PRIMARY KEY \(rowid=\?\)/);
      const stale = plan(PACKED_SQL.stale, [1, 10]).join(' ; ');
      expect(stale).toMatch(/USING INDEX history_packed_oldest \(oldest<\?\)/);
      expect(stale).not.toMatch(/TEMP B-TREE/);
    });
  });
});
