/**
 * The ISO prefix (date and time up to the second) of the seconds formatted lately, direct-mapped
 * by the second: the evaluation's own timestamp, and the first-seen and last-seen times of a person
 * met again (the same seconds, evaluation after evaluation), each pay for three digits instead of a
 * Date. At most PREFIXES entries of 20 characters. NaN matches no second.
 */
const PREFIXES = 256;
const seconds = new Float64Array(PREFIXES).fill(Number.NaN);
const prefixes: string[] = new Array<string>(PREFIXES).fill('');

/** `new Date(ms).toISOString()`, for a time in milliseconds (before 1970 too). */
export function isoTime(ms: number): string {
  const s = Math.floor(ms / 1000);
  const slot = s & (PREFIXES - 1);
  if (seconds[slot] !== s) {
    // Formatted before it is kept: a time out of Date's range throws here and leaves the slot as it was.
    const iso = new Date(s * 1000).toISOString();
    // Years before 0 or after 9999 are written with a sign and six digits: not a 20-character prefix.
    if (iso.length !== 24) return new Date(ms).toISOString();
    seconds[slot] = s;
    prefixes[slot] = iso.slice(0, 20);
  }
  const millis = ms - s * 1000;
  return `${prefixes[slot]}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}
