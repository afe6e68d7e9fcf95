import { canonicalAddress } from '../email/canonical.js';
import type { IpFacts } from '../ip/facts.js';
import type { EvaluationRequest } from '../request/evaluation-request.js';
import type { ParsedIp } from '../ip/address.js';
import { embeddedIpv4 } from '../ip/embedded.js';
import { ipv6ToWords, numberToIpv4 } from '../ip/numeric.js';
import { historyFacts } from './compute.js';
import { historyEvent, type Prior } from './event.js';
import type { HistoryFacts } from './facts.js';
import type { Hasher } from './identifiers.js';
import { placeOf } from './place.js';
import { createLocalCounts, partialFacts, type LocalCounts } from './local-counts.js';
import type { HistoryStore } from './store.js';
import { countsAfter, velocityStep, type AnswerState, type VelocityPlan, type VelocityStep } from './velocity.js';

/**
 * The evaluation's history step: one read-and-record per evaluation, before the rules run. It is
 * never what fails or delays an answer: a store that is down is not asked (PostgreSQL's is still given
 * the event, `remember`: written once it answers again); one that does not answer
 * within `timeoutMs`, or throws, or refuses the event, leaves the answer with a partial history
 * (local-counts.ts: this replica's own event counts, lower bounds; `partial: true`) and `store`
 * unavailable; at most `maxInFlight` round trips wait at once (past it, the answer is partial without
 * asking, and the event goes to the store's write-back without its read: `remember`), and at most
 * `maxKeyInFlight` for one IP address or one device: the key's next evaluations wait for one of its
 * round trips to end (in the recorder, not in the store's queue, at most MAX_KEY_WAITING of them), and
 * one still waiting when `timeoutMs` has passed answers partial and is remembered. The event of a
 * timed-out or failed step is still remembered (PostgreSQL records it in the replica's pending batch
 * when its read comes back, however late, or fails), though its answer said not.
 */
export interface HistoryRecorderOptions {
  store: HistoryStore;
  hash: Hasher;
  /** Whether the store answered its last probe or write (a field read). */
  available: () => boolean;
  timeoutMs: number;
  /** Round trips in flight at once, at most (the store's, else MAX_HISTORY_IN_FLIGHT). */
  maxInFlight?: number;
  /** Round trips in flight for one IP address or one device, at most (the store's, else MAX_KEY_IN_FLIGHT). */
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

/** Round trips in flight at once, at most, where the store does not say its own (HistoryStore.inFlight). */
export const MAX_HISTORY_IN_FLIGHT = 64;
/**
 * Round trips in flight for one IP address or one device, where the store does not say its own
 * (HistoryStore.inFlight; PostgreSQL's, README "Behaviour history"): an account farm from one
 * address then holds at most this many places in the store's reads; its evaluations past it wait
 * their turn behind its own, not in front of everyone else's; and, with a store whose reads do not
 * see the events in flight beside them, a read misses at most this many less one of the key's
 * events. Like MAX_HISTORY_IN_FLIGHT, about the store, not the traffic.
 */
export const MAX_KEY_IN_FLIGHT = 4;
/** Evaluations waiting for one key's round trips, at most; past it the answer is partial at once. */
export const MAX_KEY_WAITING = 256;

/** One key's round trips in flight, and the evaluations waiting for one of them (FIFO). */
interface KeySlots {
  n: number;
  waiting: Array<() => void>;
}

/** `velocity`: the counters the event type's rule files read and count (velocity.ts); none when null or absent. */
export type HistoryRecorder = (account: string, request: EvaluationRequest, ip: IpFacts, at: number, velocity?: VelocityPlan | null) => HistoryStep | Promise<HistoryStep>;

export function createHistoryRecorder(options: HistoryRecorderOptions): HistoryRecorder {
  const maxInFlight = options.maxInFlight ?? options.store.inFlight?.total ?? MAX_HISTORY_IN_FLIGHT;
  const maxKeyInFlight = options.maxKeyInFlight ?? options.store.inFlight?.perKey ?? MAX_KEY_IN_FLIGHT;
  const local = options.local ?? createLocalCounts();
  let inFlight = 0;
  /** Round trips in flight per IP address and device, with their waiting evaluations (an entry only while one is). */
  const keys = new Map<string, KeySlots>();
  /** Takes one of the key's round trips when it has one free. */
  const take = (id: string): boolean => {
    const slots = keys.get(id);
    if (slots === undefined) keys.set(id, { n: 1, waiting: [] });
    else if (slots.n < maxKeyInFlight) slots.n += 1;
    else return false;
    return true;
  };
  /** Gives one back: to the key's first waiting evaluation, if one is. */
  const give = (id: string) => {
    const slots = keys.get(id)!;
    const next = slots.waiting.shift();
    if (next !== undefined) return next();
    slots.n -= 1;
    if (slots.n === 0) keys.delete(id);
  };
  /** Takes the key's round trip now, or once one is given back (false: none before `expired` resolves, or too many wait). */
  const takeOrWait = (id: string, expired: Promise<void>): boolean | Promise<boolean> => {
    if (take(id)) return true;
    const slots = keys.get(id)!;
    if (slots.waiting.length >= MAX_KEY_WAITING) return false;
    return new Promise<boolean>((resolve) => {
      const turn = () => resolve(true);
      slots.waiting.push(turn);
      void expired.then(() => {
        const i = slots.waiting.indexOf(turn);
        if (i === -1) return; // its turn came first: it holds the round trip
        slots.waiting.splice(i, 1);
        resolve(false);
      });
    });
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
    /** The store's answer, read at once. */
    const readNow = (prior: Prior | null): HistoryStep => {
      // Not recorded (the store's write-back is behind): this replica's counts, though the store works.
      if (prior === null) return partial();
      const decided = afterDecision(account, step, at);
      return decided === undefined ? { facts: historyFacts(prior, event) } : { facts: historyFacts(prior, event), decided };
    };
    if (options.store.synchronous === true) {
      if (!options.available()) return partial();
      // SQLite: the read and record happen here and now; no key's round trips to count, no deadline.
      let prior;
      try {
        prior = options.store.record(event);
      } catch (error) {
        return fail(error);
      }
      if (prior instanceof Promise) {
        prior.catch(() => undefined); // not awaited: its rejection must not end the process
        return fail(new Error('a synchronous history store returned a promise'));
      }
      return readNow(prior);
    }
    const ipId = ipKey.toString('latin1');
    const deviceId = device === null ? null : device.toString('latin1');
    // Recorded all the same, without a read (PostgreSQL: into the pending batch); so are its counts after the decision.
    const remembered = (): HistoryStep => {
      let kept;
      try {
        kept = options.store.remember?.(event) ?? false;
      } catch (error) {
        return fail(error);
      }
      // Not recorded (the changes waiting to be written are full): nor are its counts after the decision.
      const decided = kept ? afterDecision(account, step, at) : undefined;
      return decided === undefined ? partial() : { ...partial(), decided };
    };
    // The store marked down (its last probe, write or read failed): not asked, but the event goes to
    // its pending changes all the same, bounded, and is written once the store answers. A store made
    // slow for a second (an attacker's load, a lock) must not forget what happened meanwhile.
    if (!options.available() || inFlight >= maxInFlight) return remembered();

    // The step's time: from its first wait, for the key's turn or the read; they share it. Made only
    // then: a read that answers at once makes no timer.
    let timer: NodeJS.Timeout | undefined;
    let expired: Promise<void> | undefined;
    const deadline = () => (expired ??= new Promise<void>((resolve) => (timer = setTimeout(resolve, options.timeoutMs))));
    const stop = () => clearTimeout(timer);

    /** The read and record, the key's round trips taken. */
    const ask = (): HistoryStep | Promise<HistoryStep> => {
      const release = () => {
        give(ipId);
        if (deviceId !== null) give(deviceId);
      };
      let prior;
      try {
        prior = options.store.record(event);
      } catch (error) {
        release();
        stop();
        return fail(error);
      }
      if (!(prior instanceof Promise)) {
        release();
        stop();
        return readNow(prior);
      }
      const decided = afterDecision(account, step, at);
      inFlight += 1;
      // A throw while the facts are computed is the step's failure too, not an unhandled rejection.
      const answered = prior.then((p): HistoryStep => ({ facts: historyFacts(p, event), ...(decided && { decided }) })).catch(fail);
      // An event whose read came back too late is still recorded: so are its counts after the decision, once (if) the read does.
      const late = decided && ((state: AnswerState) => void answered.then((s) => !s.facts.partial && decided(state)));
      const timeout = deadline().then((): HistoryStep => (late ? { ...partial(), decided: late } : partial()));
      return Promise.race([answered, timeout]).finally(() => {
        stop();
        // Counted until the store answers, not until the evaluation stops waiting.
        void answered.finally(() => {
          inFlight -= 1;
          release();
        });
      });
    };

    if (take(ipId)) {
      if (deviceId === null || take(deviceId)) return ask();
      give(ipId);
    }
    // The address or the device has its round trips in flight: wait behind them, not in front of everyone else.
    const expiry = deadline();
    return (async (): Promise<HistoryStep> => {
      if (!(await takeOrWait(ipId, expiry))) {
        stop();
        return remembered();
      }
      if (deviceId !== null && !(await takeOrWait(deviceId, expiry))) {
        give(ipId);
        stop();
        return remembered();
      }
      if (inFlight >= maxInFlight) {
        give(ipId);
        if (deviceId !== null) give(deviceId);
        stop();
        return remembered();
      }
      return ask();
    })();
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
