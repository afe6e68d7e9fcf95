import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_CAPS } from '../files/caps.js';
import { FileLimitError, readBoundedText } from '../files/read.js';
import { parseRuleFile, type RuleFileProblem } from './rule-file.js';
import type { RuleSet } from './rule-set.js';

/**
 * Reads a rules directory: one file per event type, named `<event_type>.yaml` (or `.yml`). Other
 * files (schema.json, a README) are not rule files. Each file is read through the bounded reader
 * (at most FILE_CAPS.ruleFile bytes, regular files only), one at a time, so the event loop serves
 * requests between two files. Nothing a file holds makes this throw: every problem is reported
 * against the file it is in.
 */

export const RULE_FILE = /^(.+)\.ya?ml$/;
export const EVENT_TYPE = /^[A-Za-z0-9_-]{1,64}$/;

export type RuleFileResult =
  | { eventType: string; file: string; /** The file as read: what the store keeps. */ text: string; ruleSet: RuleSet; problems?: undefined }
  | { eventType: string; file: string; ruleSet?: undefined; problems: RuleFileProblem[] };

export type DirectoryResult =
  | { files: RuleFileResult[]; error?: undefined }
  | { files?: undefined; error: string };

export async function readRuleDirectory(dir: string): Promise<DirectoryResult> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => RULE_FILE.test(name)).sort();
  } catch (error) {
    return { error: `cannot read rules directory ${dir}: ${(error as Error).message}` };
  }
  const files: RuleFileResult[] = [];
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
        ({ text } = await readBoundedText(file, FILE_CAPS.ruleFile));
      } catch (error) {
        files.push(problem(error instanceof FileLimitError ? `refused: ${error.message} (docs/rules.md, "File size")` : `cannot read: ${(error as Error).message}`));
        continue;
      }
      files.push(parseFile(eventType, file, text));
    }
  }
  return { files };
}

function parseFile(eventType: string, file: string, text: string): RuleFileResult {
  const parsed = parseRuleFile(eventType, file, text);
  return 'ruleSet' in parsed ? { eventType, file, text, ruleSet: parsed.ruleSet } : { eventType, file, problems: parsed.problems };
}
