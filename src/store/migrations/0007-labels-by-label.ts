import type { Migration } from './types.js';

/**
 * "This account's decisions labelled fraud", newest first: an index range by account and label,
 * ending with the evaluation id (which sorts by time), as the log's other searches are (0002).
 * Without it, the search walks the log newest first until it meets enough labels: labels are few,
 * so on a large log that is most of it.
 */
export const labelsByLabel: Migration = {
  version: 7,
  name: 'labels by label',
  async up(db) {
    await db.schema.createIndex('labels_label').on('labels').columns(['account_id', 'label', 'evaluation_id']).execute();
  },
};
