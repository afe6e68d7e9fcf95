/**
 * The bounds of behaviour history, in one place (README "Behaviour history"). Each is what keeps
 * an evaluation's cost constant however much history an identifier has.
 */

/** A distinct set (the accounts behind an IP, a user's devices…) is exact up to this many members, then "at least" this many. */
export const SET_CAP = 100;
/** Members a set keeps: one more than the cap, so "more than CAP" can be told from "exactly CAP". */
export const SET_KEEP = SET_CAP + 1;

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Counter grains: `events_1h` sums the last 60 minute buckets; `events_24h` the last 24 hour buckets. */
export const GRAIN_MINUTE = 1;
export const GRAIN_HOUR = 2;
export const MINUTES_IN_WINDOW = 60;
export const HOURS_IN_WINDOW = 24;

/** Set kinds: the accounts behind an identifier, its devices, its countries. */
export const SET_ACCOUNTS = 'a';
export const SET_DEVICES = 'd';
export const SET_COUNTRIES = 'c';

/**
 * Two events closer in time than this are timed as this far apart for `speed_kmh`: clocks of two
 * replicas differ by milliseconds, and a speed must never be infinite. Only ever lowers a speed.
 */
export const MIN_TRAVEL_INTERVAL_MS = 60_000;
