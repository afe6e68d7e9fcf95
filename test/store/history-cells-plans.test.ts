import { describe, expect, it } from 'vitest';
import { SQLITE_ERASE_STATEMENTS, SQLITE_HISTORY_READS, SQLITE_HISTORY_WRITES, SQLITE_PRUNE_STATEMENTS } from '../../src/store/history-sql.js';
import { withSqlitePlans } from '../support/store.js';

/**
 * SQLite's history in one table by key (migration 17): every statement that prunes, erases or
 * writes it finds its rows through the primary key or an index, never by reading the whole table
 * (a first cut of the pruning did; so did an erasure that picked the wrong index). A later change
 * of index must keep it so. The reader's statements too (src/store/history-sqlite.ts); its read of
 * a key's cells is a range that ends before the key's reverse rows (migration 18), which have no
 * bound but HISTORY_DAYS.
 */
describe('SQLite history statements', () => {
  it('search history_cells by a key or an index, never scan it', async () => {
    await withSqlitePlans((plan) => {
      const statements = { ...SQLITE_PRUNE_STATEMENTS, ...SQLITE_ERASE_STATEMENTS, ...SQLITE_HISTORY_WRITES, ...SQLITE_HISTORY_READS };
      let checked = 0;
      for (const [name, text] of Object.entries(statements)) {
        const lines = plan(text, Array.from({ length: (text.match(/\?/g) ?? []).length }, () => 1));
        const cells = lines.filter((line) => /\bhistory_cells\b/.test(line));
        for (const line of cells) expect(line, `${name}: ${lines.join(' ; ')}`).toMatch(/^SEARCH history_cells /);
        checked += cells.length;
      }
      expect(checked).toBeGreaterThan(8);
      const cells = plan(SQLITE_HISTORY_READS.cells, ['acme', Buffer.alloc(16)]);
      expect(cells.join(' ; ')).toMatch(/\(account_id=\? AND key=\? AND kind<\?\)/);
    });
  });
});
