import { canonicalAddress } from '../email/canonical.js';
import type { IpFacts } from '../ip/facts.js';
import type { EvaluationRequest } from '../request/evaluation-request.js';
import type { ParsedIp } from '../ip/address.js';
import { embeddedIpv4 } from '../ip/embedded.js';
import { ipv6ToWords, numberToIpv4 } from '../ip/numeric.js';
import { historyFacts } from './compute.js';
import { historyEvent } from './event.js';
import type { HistoryFacts } from './facts.js';
import type { Hasher } from './identifiers.js';
import { placeOf } from './place.js';
import type { HistoryStore } from './store.js';
import { countsAfter, velocityStep, type AnswerState, type VelocityPlan, type VelocityStep } from './velocity.js';

/**
 * The evaluation's history step: one read-and-record per evaluation, before the rules run. It is
 * never what fails or delays an answer: a store that is down is not asked; one that does not answer
 * within `timeoutMs`, or throws, leaves the answer with `history: null` and `store` unavailable; and
 * at most `maxInFlight` round trips wait at once (past that, the answer goes without). The event of
 * a timed-out step is still remembered (PostgreSQL records it in the replica's pending batch when
 * its read comes back, however late), though its answer said not.
 */
export interface HistoryRecorderOptions {
  store: HistoryStore;
  hash: Hasher;
  /** Whether the store answered its last probe or write (a field read). */
  available: () => boolean;
  timeoutMs: number;
  maxInFlight?: number;
  /** A step that failed: the store is not working. */
  onError: (error: Error) => void;
}

/**
 * `decided`: to call once the rules decided, with the answer's state: the counts of the velocity
 * counters filtered on states (velocity.ts) that the state takes are made then. Absent when the
 * event has none.
 */
export type HistoryStep = ({ facts: HistoryFacts } | { facts: null; unavailable: true }) & { decided?: (state: AnswerState) => void };

const UNAVAILABLE: HistoryStep = { facts: null, unavailable: true };
export const MAX_HISTORY_IN_FLIGHT = 64;

/** `velocity`: the counters the event type's rule files read and count (velocity.ts); none when null or absent. */
export type HistoryRecorder = (account: string, request: EvaluationRequest, ip: IpFacts, at: number, velocity?: VelocityPlan | null) => HistoryStep | Promise<HistoryStep>;

export function createHistoryRecorder(options: HistoryRecorderOptions): HistoryRecorder {
  const maxInFlight = options.maxInFlight ?? MAX_HISTORY_IN_FLIGHT;
  let inFlight = 0;
  const fail = (error: unknown): HistoryStep => {
    options.onError(error as Error);
    return UNAVAILABLE;
  };

  /** The post-decision counts of the step's state-filtered counters; none when it has none. */
  const afterDecision = (account: string, step: VelocityStep | null, at: number) => {
    if (step === null || step.after.length === 0) return undefined;
    return (state: AnswerState) => {
      const counts = countsAfter(step, state);
      if (counts.length === 0) return;
      try {
        options.store.countAfter(account, counts, at);
      } catch (error) {
        options.onError(error as Error);
      }
    };
  };

  return (account, request, ip, at, velocity) => {
    if (!options.available() || inFlight >= maxInFlight) return UNAVAILABLE;
    const { hash } = options;
    const canonical = canonicalAddress(request.parsedEmail);
    const email = hash(account, 'email', canonical);
    const userId = request.user?.user_id;
    const deviceHash = request.device_intelligence?.device_hash;
    const user = userId === undefined ? null : hash(account, 'user', userId);
    const ipValue = ipIdentifier(request.parsedIp);
    const ipKey = hash(account, 'ip', ipValue);
    const device = deviceHash === undefined ? null : hash(account, 'device', deviceHash);
    let step = null;
    if (velocity !== undefined && velocity !== null) {
      // The keys hashed above, so a counter over one of them costs no second hash.
      const known = new Map<string, Buffer>([[`email\u0000${canonical}`, email], [`ip\u0000${ipValue}`, ipKey]]);
      if (user !== null) known.set(`user\u0000${userId}`, user);
      if (device !== null) known.set(`device\u0000${deviceHash}`, device);
      step = velocityStep(velocity, account, request, at, hash, known);
    }
    const event = historyEvent({
      account,
      at,
      ip: ipKey,
      email,
      identity: user ?? email,
      device,
      user,
      place: placeOf(ip),
      velocity: step,
    });
    let prior;
    try {
      prior = options.store.record(event);
    } catch (error) {
      return fail(error);
    }
    // Not recorded (the store's write-back is behind): unknown, though the store works.
    if (prior === null) return UNAVAILABLE;
    const decided = afterDecision(account, step, at);
    if (!(prior instanceof Promise)) return decided === undefined ? { facts: historyFacts(prior, event) } : { facts: historyFacts(prior, event), decided };

    inFlight += 1;
    let timer: NodeJS.Timeout | undefined;
    const answered = prior.then((p): HistoryStep => ({ facts: historyFacts(p, event), ...(decided && { decided }) }), fail);
    // An event whose read came back too late is still recorded: so are its counts after the decision, once (if) the read does.
    const late = decided && ((state: AnswerState) => void answered.then((s) => s.facts !== null && decided(state)));
    const timeout = new Promise<HistoryStep>((resolve) => {
      timer = setTimeout(() => resolve(late ? { ...UNAVAILABLE, decided: late } : UNAVAILABLE), options.timeoutMs);
    });
    return Promise.race([answered, timeout]).finally(() => {
      clearTimeout(timer);
      // Counted until the store answers, not until the evaluation stops waiting.
      void answered.finally(() => {
        inFlight -= 1;
      });
    });
  };
}

/**
 * What `history.ip` counts: an IPv4 address; an IPv6 address that carries an IPv4 client (NAT64,
 * 6to4, Teredo, IPv4-compatible: src/ip/embedded.ts) as that IPv4 address, the client the lists
 * and the IP data check too; any other IPv6 address by its /64 network, which one household or
 * one server holds and within which a device picks new addresses at will (RFC 8981). (By its /64,
 * every NAT64 client of a carrier would be one address: 64:ff9b::/96 is one /64.)
 */
export function ipIdentifier(ip: ParsedIp): string {
  if (ip.version === 4) return ip.address;
  const words = ipv6ToWords(ip.address);
  const carried = embeddedIpv4(words);
  if (carried !== null) return numberToIpv4(carried.ipv4);
  return `${words[0]!.toString(16)}:${words[1]!.toString(16)}::/64`;
}
