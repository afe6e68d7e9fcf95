import { createHash } from 'node:crypto';
import { canonicalAddress } from '../email/canonical.js';
import type { EvaluationRequest } from '../request/evaluation-request.js';
import { ipv6ToWords } from '../ip/numeric.js';
import { MINUTE_MS } from './caps.js';
import type { Hasher, IdentifierKind } from './identifiers.js';

/**
 * Velocity counters (PRODUCT.md "Velocity counters", docs/rules.md "Velocity counters"): named
 * counts an analyst defines in a rule file, over one key of the request, in a window of minutes to
 * days, read by rules as `velocity.<name>`. Counted in the history step, as one more kind of
 * history row: under the same keyed hashes (identifiers.ts), in buckets, so an evaluation's cost is
 * the number of counters, never the volume counted.
 */
export const VELOCITY_KEYS = [
  'email.domain',
  'email.canonical',
  'ip.address',
  'ip.network',
  'device_intelligence.device_hash',
  'user.user_id',
] as const;
export type VelocityKey = (typeof VELOCITY_KEYS)[number];

/** The states an answer can have (`score.state`): what a counter's `states` filter names. */
export const ANSWER_STATES = ['approve', 'review', 'decline'] as const;
export type AnswerState = (typeof ANSWER_STATES)[number];

/** At most this many counters per rule file (one event type): each is one more read per evaluation. */
export const MAX_COUNTERS = 20;
/** The longest window: 30 days (its buckets are days: 30 rows per key at most). */
export const MAX_WINDOW_MINUTES = 30 * 24 * 60;

/**
 * A window's buckets: one-minute buckets up to 2 hours, one-hour buckets up to 7 days, one-day
 * buckets beyond. At most 168 buckets a window. As `history.ip.events_1h`, the oldest bucket of the
 * window counts whole: a "1h" counter counts the current minute and the 59 before it.
 */
export function grainOf(minutes: number): number {
  if (minutes <= 120) return 1;
  if (minutes <= 7 * 24 * 60) return 60;
  return 24 * 60;
}

const UNIT_MINUTES = { m: 1, h: 60, d: 24 * 60 } as const;

/** `10m`, `1h`, `7d` as minutes, or why not. */
export function parseWindow(text: string): { minutes: number } | { problem: string } {
  const match = /^([1-9][0-9]{0,5})([mhd])$/.exec(text);
  if (match === null) return { problem: 'a window is a whole number and a unit: m (minutes), h (hours) or d (days), e.g. 10m, 1h, 7d' };
  const minutes = Number(match[1]) * UNIT_MINUTES[match[2] as keyof typeof UNIT_MINUTES];
  if (minutes > MAX_WINDOW_MINUTES) return { problem: 'a window is at most 30d' };
  const grain = grainOf(minutes);
  if (minutes % grain !== 0) {
    return { problem: grain === 60 ? 'a window longer than 2h is whole hours (e.g. 3h, 36h)' : 'a window longer than 7d is whole days (e.g. 14d)' };
  }
  return { minutes };
}

/** A counter as a compiled rule file holds it. */
export interface VelocityCounter {
  name: string;
  key: VelocityKey;
  minutes: number;
  /** Minutes per bucket, and the buckets a read sums. */
  grain: number;
  buckets: number;
  /** The event types it counts (its file's own by default). */
  eventTypes: readonly string[];
  /**
   * The answered states it counts (`decline`: "declined logins"), or null for every event. A
   * filtered counter is read before the rules decide, as any, and counted after they did, when the
   * answer's state is one of these: its value never includes the event being evaluated.
   */
  states: readonly AnswerState[] | null;
  /**
   * Where its buckets are stored: a digest of key, grain, event types and states, so two counters that count
   * the same events share rows (whatever their names), and renaming a counter keeps its counts.
   */
  series: string;
}

export function velocityCounter(input: { name: string; key: VelocityKey; window: string; event_types?: string[]; states?: AnswerState[] }, fileEventType: string): VelocityCounter {
  const window = parseWindow(input.window);
  if ('problem' in window) throw new Error(`unreachable: the schema checks windows (${window.problem})`);
  const grain = grainOf(window.minutes);
  const eventTypes = [...new Set(input.event_types ?? [fileEventType])].sort();
  // In the file's order of the states' severity; all three is no filter (the same rows as none).
  const states = input.states === undefined ? null : ANSWER_STATES.filter((s) => input.states!.includes(s));
  const filter = states === null || states.length === ANSWER_STATES.length ? null : states;
  // Without a filter the digest is what it was before filters existed: those counters keep their rows.
  const text = `${input.key}\u0000${grain}\u0000${eventTypes.join(',')}${filter === null ? '' : `\u0000${filter.join(',')}`}`;
  const series = createHash('sha256').update(text).digest('hex').slice(0, 16);
  return { name: input.name, key: input.key, minutes: window.minutes, grain, buckets: window.minutes / grain, eventTypes, states: filter, series };
}

/**
 * What one evaluation reads and counts: the counters its event type's rule file reads, and the
 * series of every counter of the account's live files that counts this event type (each once, kept
 * as long as its longest window needs).
 */
export interface VelocityPlan {
  reads: readonly VelocityCounter[];
  counts: readonly VelocityCounter[];
}

export function velocityPlan(eventType: string, own: readonly VelocityCounter[], all: readonly VelocityCounter[]): VelocityPlan | null {
  const counts = new Map<string, VelocityCounter>();
  for (const counter of all) {
    if (!counter.eventTypes.includes(eventType)) continue;
    const known = counts.get(counter.series);
    if (known === undefined || known.buckets < counter.buckets) counts.set(counter.series, counter);
  }
  if (own.length === 0 && counts.size === 0) return null;
  return { reads: own, counts: [...counts.values()] };
}

/** One counter's read: the key's buckets `from` (exclusive) to `to` (inclusive); no key, no read. */
export interface VelocityRead {
  key: Buffer | null;
  series: string;
  from: number;
  to: number;
  /** Whether this event counts in it (its filter takes the event's type): then the value is the read + 1. */
  adds: boolean;
}

/** One series' bucket this event adds 1 to, kept until minute `expires` (when no window reads it any more). */
export interface VelocityCount {
  key: Buffer;
  series: string;
  bucket: number;
  expires: number;
}

/** A count made once the rules decided: only when the answer's state is one of `states`. */
export interface VelocityCountAfter {
  count: VelocityCount;
  states: readonly AnswerState[];
}

export interface VelocityStep {
  names: readonly string[];
  reads: VelocityRead[];
  /** Counted with the event, before the rules run. */
  counts: VelocityCount[];
  /** Counted after the decision, by state (VelocityStep.counts of filtered counters). */
  after: VelocityCountAfter[];
}

/** Of the step's post-decision counts, those the answer's state takes. */
export const countsAfter = (step: VelocityStep, state: AnswerState): VelocityCount[] =>
  step.after.filter((a) => a.states.includes(state)).map((a) => a.count);

const KIND: Record<VelocityKey, IdentifierKind> = {
  'email.domain': 'domain',
  'email.canonical': 'email',
  'ip.address': 'ip',
  'ip.network': 'ip',
  'device_intelligence.device_hash': 'device',
  'user.user_id': 'user',
};

/**
 * The text a key hashes from, or undefined when the request does not carry it. E-mail, user, device
 * and (IPv4) address hash exactly as history's identifiers do, so those counters live under the
 * person's own history key and go with it on erasure.
 */
export function velocityKeyValue(key: VelocityKey, request: EvaluationRequest): string | undefined {
  switch (key) {
    case 'email.domain': return request.parsedEmail.domain;
    case 'email.canonical': return canonicalAddress(request.parsedEmail);
    case 'ip.address': return request.parsedIp.address;
    case 'ip.network': return ipNetwork(request);
    case 'device_intelligence.device_hash': return request.device_intelligence?.device_hash;
    case 'user.user_id': return request.user?.user_id;
  }
}

/** An IPv4 address (or the one an IPv6 address carries) by its /24; any other IPv6 address by its /64 (as history counts it). */
function ipNetwork(request: EvaluationRequest): string {
  const ip = request.parsedIp;
  const v4 = ip.version === 4 ? ip.address : ip.embedded?.address;
  if (v4 !== undefined) return `${v4.slice(0, v4.lastIndexOf('.'))}.0/24`;
  const words = ipv6ToWords(ip.address);
  return `${words[0]!.toString(16)}:${words[1]!.toString(16)}::/64`;
}

/**
 * The event's reads and counts. `known` holds keys the history step hashed already (by kind and
 * value), so a counter over the e-mail or the user costs no second hash.
 */
export function velocityStep(plan: VelocityPlan, account: string, request: EvaluationRequest, at: number, hash: Hasher, known: Map<string, Buffer>): VelocityStep {
  const minute = Math.floor(at / MINUTE_MS);
  const keyOf = (key: VelocityKey): Buffer | null => {
    const value = velocityKeyValue(key, request);
    if (value === undefined) return null;
    const kind = KIND[key];
    const id = `${kind}\u0000${value}`;
    let hashed = known.get(id);
    if (hashed === undefined) known.set(id, (hashed = hash(account, kind, value)));
    return hashed;
  };
  const reads = plan.reads.map((c): VelocityRead => {
    const to = Math.floor(minute / c.grain);
    // A state filter: the event's state is not known yet, so it is not in the value.
    return { key: keyOf(c.key), series: c.series, from: to - c.buckets, to, adds: c.states === null && c.eventTypes.includes(request.event_type) };
  });
  const counts: VelocityCount[] = [];
  const after: VelocityCountAfter[] = [];
  for (const c of plan.counts) {
    const key = keyOf(c.key);
    if (key === null) continue;
    const bucket = Math.floor(minute / c.grain);
    const count = { key, series: c.series, bucket, expires: (bucket + c.buckets) * c.grain };
    if (c.states === null) counts.push(count);
    else after.push({ count, states: c.states });
  }
  return { names: plan.reads.map((c) => c.name), reads, counts, after };
}

/** The counters' values with this event counted; `null` where the request has no such key. */
export function velocityValues(step: VelocityStep, prior: readonly number[]): Record<string, number | null> {
  const values: Record<string, number | null> = {};
  step.reads.forEach((read, i) => {
    values[step.names[i]!] = read.key === null ? null : prior[i]! + (read.adds ? 1 : 0);
  });
  return values;
}
