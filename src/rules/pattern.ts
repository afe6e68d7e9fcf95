import { RE2JS } from 're2js';

/**
 * Regular expressions in rule files, matched by RE2JS, a JavaScript port of RE2
 * (https://github.com/google/re2/wiki/Syntax): it never backtracks, so a match costs time linear
 * in the input whatever the pattern. A guard that refuses "dangerous shapes" in front of V8's
 * backtracking engine can always be beaten (`^(\w?\w?)+$` beat ours); this cannot.
 *
 * The bound, which holds for every pattern a file can hold:
 * - a pattern is at most MAX_PATTERN_LENGTH characters and compiles to at most
 *   MAX_PATTERN_INSTRUCTIONS instructions, and all the patterns of one file together to at most
 *   MAX_FILE_INSTRUCTIONS (`[a-z]{0,16}` is 33 instructions: the repeat count multiplies);
 * - the engine tests at most MAX_REGEX_INPUT characters (every request field is shorter);
 * - matching goes through `matcher().find()`, which runs RE2's bit-state or NFA simulation:
 *   each (instruction, position) pair is visited at most once, so one evaluation of a rule set
 *   costs at most MAX_FILE_INSTRUCTIONS x MAX_REGEX_INPUT steps (bench/rules.ts measures it).
 *   `test()` would use RE2's lazy DFA instead, whose state cache holds up to 8 MB per pattern
 *   and, on inputs built to make new states, costs more per match than the simulation.
 */

export const MAX_PATTERN_LENGTH = 200;
export const MAX_PATTERN_INSTRUCTIONS = 1000;
export const MAX_FILE_INSTRUCTIONS = 2000;
export const MAX_REGEX_INPUT = 256;

export interface Pattern {
  source: string;
  /** Compiled program size, what the budgets count. */
  instructions: number;
  /** Whether the pattern matches anywhere in `text` (unanchored, as `RegExp.prototype.test`). */
  test(text: string): boolean;
}

/** A compiled pattern, or why it is refused (the loader adds the file and the path). */
export function compilePattern(source: string): Pattern | { problem: string } {
  if (source.length > MAX_PATTERN_LENGTH) return { problem: `a pattern is at most ${MAX_PATTERN_LENGTH} characters` };
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source);
  } catch (error) {
    return { problem: `not a valid RE2 regular expression (${reason(error as Error)}; docs/rules.md, "Regular expressions")` };
  }
  const instructions = compiled.programSize();
  if (instructions > MAX_PATTERN_INSTRUCTIONS) {
    return { problem: `compiles to ${instructions} instructions, more than ${MAX_PATTERN_INSTRUCTIONS}: use smaller repeat counts ({n,m})` };
  }
  // One matcher per pattern, given each input in turn: a new one per match allocated more than
  // the match itself cost. Safe because matching is synchronous.
  const matcher = compiled.matcher('');
  return { source, instructions, test: (text) => matcher.resetMatcherInput(text).find() };
}

/** RE2JS says "error parsing regexp: invalid escape sequence: `\1`"; the first part is noise here. */
function reason(error: Error): string {
  return error.message.replace(/^error parsing regexp: /, '');
}
