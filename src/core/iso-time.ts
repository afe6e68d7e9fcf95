/** NaN equals no second, so the first call always formats its prefix (any ms, before 1970 too). */
let second = Number.NaN;
let prefix = '';

/**
 * `new Date(ms).toISOString()`, for the evaluation's timestamp: the date and time up to the second
 * are formatted once per second and reused, so a request pays for three digits instead of a Date.
 */
export function isoTime(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s !== second) {
    second = s;
    prefix = new Date(s * 1000).toISOString().slice(0, 20);
  }
  const millis = ms - s * 1000;
  return `${prefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}
