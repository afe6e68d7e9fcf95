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
import { createLocalCounts, partialFacts, type LocalCounts } from './local-counts.js';
import type { HistoryStore } from './store.js';
import { countsAfter, velocityStep, type AnswerState, type VelocityPlan, type VelocityStep } from './velocity.js';

/**
 * The evaluation's history step: one read-and-record per evaluation, before the rules run. It is
 * never what fails or delays an answer: a store that is down is not asked; one that does not answer
 * within `timeoutMs`, or throws, or refuses the event, leaves the answer with a partial history
 * (local-counts.ts: this replica's own event counts, lower bounds; `partial: true`) and `store`
 * unavailable; at most `maxInFlight` round trips wait at once, and at most `maxKeyInFlight` for one
 * IP address or one device (past either, the answer is partial without asking, and the event goes
 * to the store's write-back without its read: `remember`). The event of a timed-out step is still
 * remembered (PostgreSQL records it in the replica's pending batch when its read comes back,
 * however late), though its answer said not.
 */
export interface HistoryRecorderOptions {
  store: HistoryStore;
  hash: Hasher;
  /** Whether the store answered its last probe or write (a field read). */
  available: () => boolean;
  timeoutMs: number;
  maxInFlight?: number;
  /** Round trips in flight for one IP address or one device, at most (MAX_KEY_IN_FLIGHT). */
  maxKeyInFlight?: number;
  /** This replica's own counts; a bounded one of its own when not given. */
  local?: LocalCounts;
  /** A step that failed: the store is not working. */
  onError: (error: Error) => void;
}

/**
 * `facts.partial`: the store did not answer (`store` goes in `unavailable`). `decided`: to call once
 * the rules decided, with the answer's state: the counts of the velocity counters filtered on states
 * (velocity.ts) that the state takes are made then. Absent when the event has none, or was not recorded.
 */
export interface HistoryStep {
  facts: HistoryFacts;
  decided?: (state: AnswerState) => void;
}

export const MAX_HISTORY_IN_FLIGHT = 64;
/**
 * Round trips in flight for one IP address or one device (README "Behaviour history"): an account
 * farm from one address then holds at most this many of the pool's 10 connections, and its
 * evaluations past it answer from this replica's counts at once instead of queueing in front of
 * everyone else's. A constant like MAX_HISTORY_IN_FLIGHT: both are about the pool, not the traffic.
 */
export const MAX_KEY_IN_FLIGHT = 4;

/** `velocity`: the counters the event type's rule files read and count (velocity.ts); none when null or absent. */
export type HistoryRecorder = (account: string, request: EvaluationRequest, ip: IpFacts, at: number, velocity?: VelocityPlan | null) => HistoryStep | Promise<HistoryStep>;

export function createHistoryRecorder(options: HistoryRecorderOptions): HistoryRecorder {
  const maxInFlight = options.maxInFlight ?? MAX_HISTORY_IN_FLIGHT;
  const maxKeyInFlight = options.maxKeyInFlight ?? MAX_KEY_IN_FLIGHT;
  const local = options.local ?? createLocalCounts();
  let inFlight = 0;
  /** Round trips in flight per IP address and device (at most maxInFlight × 2 entries). */
  const keyInFlight = new Map<string, number>();
  const enter = (id: string) => keyInFlight.set(id, (keyInFlight.get(id) ?? 0) + 1);
  const leave = (id: string) => {
    const n = keyInFlight.get(id)! - 1;
    if (n === 0) keyInFlight.delete(id);
    else keyInFlight.set(id, n);
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
    // Counted on every evaluation, so the counts hold the burst before the store fell behind.
    const reading = local.count(event);
    // Built only when needed: most evaluations have the store's answer.
    const partial = (): HistoryStep => ({ facts: partialFacts(reading, step?.names ?? null) });
    const fail = (error: unknown): HistoryStep => {
      options.onError(error as Error);
      return partial();
    };
    if (!options.available()) return partial();
    const ipId = ipKey.toString('latin1');
    const deviceId = device === null ? null : device.toString('latin1');
    if (inFlight >= maxInFlight || (keyInFlight.get(ipId) ?? 0) >= maxKeyInFlight || (deviceId !== null && (keyInFlight.get(deviceId) ?? 0) >= maxKeyInFlight)) {
      try {
        options.store.remember?.(event);
      } catch (error) {
        return fail(error);
      }
      // Recorded all the same (PostgreSQL): so are its counts after the decision.
      const decided = options.store.remember === undefined ? undefined : afterDecision(account, step, at);
      return decided === undefined ? partial() : { ...partial(), decided };
    }
    let prior;
    try {
      prior = options.store.record(event);
    } catch (error) {
      return fail(error);
    }
    // Not recorded (the store's write-back is behind): this replica's counts, though the store works.
    if (prior === null) return partial();
    const decided = afterDecision(account, step, at);
    if (!(prior instanceof Promise)) return decided === undefined ? { facts: historyFacts(prior, event) } : { facts: historyFacts(prior, event), decided };

    inFlight += 1;
    enter(ipId);
    if (deviceId !== null) enter(deviceId);
    let timer: NodeJS.Timeout | undefined;
    const answered = prior.then((p): HistoryStep => ({ facts: historyFacts(p, event), ...(decided && { decided }) }), fail);
    // An event whose read came back too late is still recorded: so are its counts after the decision, once (if) the read does.
    const late = decided && ((state: AnswerState) => void answered.then((s) => !s.facts.partial && decided(state)));
    const timeout = new Promise<HistoryStep>((resolve) => {
      timer = setTimeout(() => resolve(late ? { ...partial(), decided: late } : partial()), options.timeoutMs);
    });
    return Promise.race([answered, timeout]).finally(() => {
      clearTimeout(timer);
      // Counted until the store answers, not until the evaluation stops waiting.
      void answered.finally(() => {
        inFlight -= 1;
        leave(ipId);
        if (deviceId !== null) leave(deviceId);
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
