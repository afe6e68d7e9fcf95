import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRuleFile, type RuleFileProblem } from './rule-file.js';
import type { RuleSet } from './rule-set.js';

/**
 * Reads a rules directory: one file per event type, named `<event_type>.yaml` (or `.yml`). Other
 * files (schema.json, a README) are not rule files. Synchronous on purpose: an account's directory
 * is read on its first request, inside the synchronous RuleBook.evaluate, and rule files are small.
 */

export const RULE_FILE = /^(.+)\.ya?ml$/;
const EVENT_TYPE = /^[A-Za-z0-9_-]{1,64}$/;

export type RuleFileResult =
  | { eventType: string; file: string; /** The file as read: what the store keeps. */ text: string; ruleSet: RuleSet; problems?: undefined }
  | { eventType: string; file: string; ruleSet?: undefined; problems: RuleFileProblem[] };

export type DirectoryResult =
  | { files: RuleFileResult[]; /** Names and contents: equal fingerprints, same rule sets. */ fingerprint: string; error?: undefined }
  | { files?: undefined; error: string };

export function readRuleDirectory(dir: string): DirectoryResult {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => RULE_FILE.test(name)).sort();
  } catch (error) {
    return { error: `cannot read rules directory ${dir}: ${(error as Error).message}` };
  }
  const files: RuleFileResult[] = [];
  const texts: string[] = [];
  const byEventType = new Map<string, string>();
  for (const name of names) {
    const file = join(dir, name);
    const eventType = RULE_FILE.exec(name)![1]!;
    const problem = (message: string): RuleFileResult => ({ eventType, file, problems: [{ file, path: '', line: null, column: null, message }] });
    if (!EVENT_TYPE.test(eventType)) {
      files.push(problem('the file name is the event type: 1 to 64 letters, digits, _ or -'));
    } else if (byEventType.has(eventType)) {
      files.push(problem(`event type "${eventType}" is already defined by ${byEventType.get(eventType)}`));
    } else {
      byEventType.set(eventType, file);
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        files.push(problem(`cannot read: ${(error as Error).message}`));
        continue;
      }
      texts.push(`${name}\0${text}`);
      files.push(parseFile(eventType, file, text));
    }
  }
  return { files, fingerprint: `${names.join('\0')}\0\0${texts.join('\0')}` };
}

function parseFile(eventType: string, file: string, text: string): RuleFileResult {
  const parsed = parseRuleFile(eventType, file, text);
  return 'ruleSet' in parsed ? { eventType, file, text, ruleSet: parsed.ruleSet } : { eventType, file, problems: parsed.problems };
}
