/**
 * A conservative guard for rule-file regular expressions. V8's engine backtracks, so a pattern such
 * as `(a+)+$` can take seconds on a short input; a rule file must never be able to stall the request
 * path. We refuse the shapes that backtrack badly instead of adding RE2, a native addon that would
 * put a node-gyp build into `npm ci` and into the Docker image:
 *
 * - back-references and look-arounds (not regular; RE2 refuses them too);
 * - a repeated group that itself contains a repetition or an alternation (`(a+)+`, `(a|ab)*`):
 *   exponential backtracking;
 * - more than two unbounded repetitions (`*`, `+`, `{n,}`, `{n,m}` with m > 16): `.*.*.*x` is cubic,
 *   measured at ~2 s on 256 characters, while two stay within ~15 ms in the worst case;
 * - patterns over 200 characters.
 *
 * And the engine tests at most MAX_REGEX_INPUT characters (every request field is shorter).
 */

export const MAX_PATTERN_LENGTH = 200;
export const MAX_REGEX_INPUT = 256;
const MAX_UNBOUNDED = 2;
const LARGE_REPEAT = 16;

interface Group {
  repeats: boolean;
  alternates: boolean;
}

/** Why a pattern is refused, or `null` when it is accepted (compiled with the `u` flag). */
export function regexProblem(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return `a pattern is at most ${MAX_PATTERN_LENGTH} characters`;
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return `not a valid regular expression: ${(error as Error).message}`;
  }
  const stack: Group[] = [{ repeats: false, alternates: false }];
  let last: Group | null = null; // the atom a quantifier would apply to, when it is a group
  let unbounded = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    const top = stack[stack.length - 1]!;
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<')) return 'back-references are not allowed';
      i += 1;
      // \p{...}, \u{...}: skip the braces so they are not read as a quantifier.
      if (/[pPu]/.test(next) && pattern[i + 1] === '{') i = pattern.indexOf('}', i);
      last = null;
    } else if (ch === '[') {
      i = endOfClass(pattern, i);
      last = null;
    } else if (ch === '(') {
      if (/^\(\?<?[=!]/.test(pattern.slice(i, i + 4))) return 'look-ahead and look-behind are not allowed';
      stack.push({ repeats: false, alternates: false });
      last = null;
    } else if (ch === ')') {
      const group = stack.pop()!;
      const parent = stack[stack.length - 1]!;
      parent.repeats ||= group.repeats;
      parent.alternates ||= group.alternates;
      last = group;
    } else if (ch === '|') {
      top.alternates = true;
      last = null;
    } else if (ch === '*' || ch === '+' || ch === '?' || ch === '{') {
      const { max, end } = quantifier(pattern, i);
      i = pattern[end + 1] === '?' ? end + 1 : end; // a lazy quantifier backtracks the same way
      if (max > 1 && last !== null && (last.repeats || last.alternates)) {
        return 'a repeated group must not contain a repetition or an alternation (use a character class)';
      }
      if (max > LARGE_REPEAT && ++unbounded > MAX_UNBOUNDED) {
        return `at most ${MAX_UNBOUNDED} unbounded repetitions (*, +, {n,}) are allowed`;
      }
      if (max > 1) top.repeats = true;
      last = null;
    } else {
      last = null;
    }
  }
  return null;
}

function endOfClass(pattern: string, start: number): number {
  for (let i = start + 1; i < pattern.length; i++) {
    if (pattern[i] === '\\') i += 1;
    else if (pattern[i] === ']') return i;
  }
  return pattern.length;
}

/** The maximum count of the quantifier at `i`, and where it ends. */
function quantifier(pattern: string, i: number): { max: number; end: number } {
  const ch = pattern[i];
  if (ch === '*' || ch === '+') return { max: Infinity, end: i };
  if (ch === '?') return { max: 1, end: i };
  const close = pattern.indexOf('}', i);
  const [min, max] = pattern.slice(i + 1, close).split(',');
  if (max === undefined) return { max: Number(min), end: close };
  return { max: max === '' ? Infinity : Number(max), end: close };
}
