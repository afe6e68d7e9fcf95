/**
 * PostgreSQL array parameters as literals made in one `join`, where the pg client's own array
 * serialization (`arrayString`) escapes element by element with two regular expressions: the
 * history writer's and the evaluation log's batches send thousands of elements a second.
 */

/**
 * A literal of numbers, or of byte strings given in hex (`bytes`: each element `"\\x…"`, bytea's
 * hex input once the literal's quoting is read): no element needs escaping. For the history
 * writer's keys, members and counts, which are never null: ~40 µs of the main thread an evaluation
 * in the new-person mix, the writer's ~25 array elements an evaluation (bench/profile.ts --postgres).
 */
export function arrayLiteral(values: readonly (string | number)[], bytes: boolean): string {
  if (values.length === 0) return '{}';
  return bytes ? `{"\\\\x${values.join('","\\\\x')}"}` : `{${values.join(',')}}`;
}

/** What textLiteral's last checked value starts as: equal to no value a caller passes (a null, undefined). */
const UNCHECKED = Symbol('unchecked');

/**
 * A literal of strings, each quoted, when none holds a character the quoting would have to escape
 * (`"` or a backslash) and none is null: account ids (ACCOUNT_ID allows neither), set kinds,
 * velocity series, rule ids, evaluation ids. Otherwise the array itself, which pg's client escapes
 * element by element. Batches repeat one account id and a few kinds row after row, so a value is
 * checked only when it differs from the one before. The client's serialization of the history
 * writer's text columns was ~35 µs of the main thread and ~5 KB allocated an evaluation in the
 * new-person mix (bench/profile.ts --postgres, bench/allocations.ts --postgres).
 */
export function textLiteral(values: readonly (string | null)[]): string | readonly (string | null)[] {
  if (values.length === 0) return '{}';
  // The first is checked as any other: nothing a caller passes equals UNCHECKED.
  let checked: unknown = UNCHECKED;
  for (const value of values) {
    if (value === checked) continue;
    if (typeof value !== 'string' || value.includes('"') || value.includes('\\')) return values;
    checked = value;
  }
  return `{"${values.join('","')}"}`;
}

/** A column of numbers or of strings as a literal (as above); anything else (nulls, mixed) as the array itself. */
export function columnLiteral(values: readonly unknown[]): unknown {
  if (values.length === 0) return '{}';
  if (typeof values[0] === 'number') return values.every((v) => typeof v === 'number' && Number.isFinite(v)) ? `{${values.join(',')}}` : values;
  return textLiteral(values as readonly (string | null)[]);
}
