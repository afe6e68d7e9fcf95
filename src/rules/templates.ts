import { readRuleDirectory } from './directory.js';
import { RuleSetError } from './rule-file.js';

/** A rule file's text and the event type it is for. */
export interface RuleFileText {
  eventType: string;
  yaml: string;
}

/**
 * A rules directory read for the store: every file valid, or nothing (a RuleSetError naming each
 * file, line and path). RULES_DIR is read this way at start, as the rule sets a new account starts
 * from; `npm run rules -- apply DIR` and an accounts file's rules directories too. Every file goes
 * through the bounded reader (src/files/read.ts): a device, a FIFO or an oversized file is a
 * problem naming the file, like a YAML error.
 */
export async function readRuleFiles(dir: string): Promise<RuleFileText[]> {
  const result = await readRuleDirectory(dir);
  if (result.error !== undefined) throw new Error(result.error);
  // No event type at all is a wrong path or an unmounted volume, not a choice.
  if (result.files.length === 0) throw new Error(`no rule files (<event_type>.yaml) in rules directory ${dir}`);
  const problems = result.files.flatMap((f) => f.problems ?? []);
  if (problems.length > 0) throw new RuleSetError(problems);
  return result.files.flatMap((f) => (f.problems === undefined ? [{ eventType: f.eventType, yaml: f.text }] : []));
}
