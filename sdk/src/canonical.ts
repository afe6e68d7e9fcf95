import type { SignalValue } from './source.js';

/** JSON with object keys sorted at every level: the same value always gives the same text. */
export function canonicalJson(value: SignalValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key]!)}`)
      .join(',')}}`;
  }
  // Non-finite numbers have no JSON form; JSON.stringify writes null, as for any other JSON value.
  return JSON.stringify(value);
}
