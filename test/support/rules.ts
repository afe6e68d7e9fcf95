import { pino } from 'pino';
import { createRuleBook, type StoredRuleBook } from '../../src/rules/rule-book.js';
import { readRuleFiles } from '../../src/rules/templates.js';

/**
 * The production rule book over a rules directory's files, as the store would hand them to it
 * (each file version 1 of its event type), for tests of the evaluator that need no store.
 */
export async function ruleBookFromDirectory(dir = 'rules', account = 'default'): Promise<StoredRuleBook> {
  const files = await readRuleFiles(dir);
  return createRuleBook(
    {
      revision: 1,
      shadows: [],
      ruleSets: files.map((file, i) => ({ id: i + 1, account_id: account, event_type: file.eventType, version: 1, yaml: file.yaml })),
    },
    { logger: pino({ level: 'silent' }) },
  );
}
