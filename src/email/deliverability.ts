import type { MailExchange } from '../dns/records.js';
import type { LookupResult, Resolver } from '../dns/resolver.js';
import type { Deliverability, MxRecord } from './facts.js';
import { isUsableMailHost } from './mail-host.js';

export interface DeliverabilityResult {
  deliverability: Deliverability;
  /**
   * `null` when unknown; `[]` when the domain has no MX (none, or an implicit MX from A/AAAA).
   * At most the 10 most preferred records (dns/records.ts); when deliverable, only the usable mail
   * hosts among them. Frozen, shared by every response that carries them.
   */
  mx_records: MxRecord[] | null;
  /** Why it is unknown, for logs. */
  detail: string | null;
}

const unknown = (detail: string): DeliverabilityResult => ({ deliverability: 'unknown', mx_records: null, detail });
const undeliverable = (mx: MxRecord[]): DeliverabilityResult => ({ deliverability: 'undeliverable', mx_records: mx, detail: null });
const deliverable = (mx: MxRecord[]): DeliverabilityResult => ({ deliverability: 'deliverable', mx_records: mx, detail: null });
/** No mail host, and mail to the domain's own address: one object each, so callers can memoize on them. */
const NO_MAIL_HOST = Object.freeze(undeliverable(Object.freeze([]) as unknown as MxRecord[]));
const IMPLICIT_MX = Object.freeze(deliverable(Object.freeze([]) as unknown as MxRecord[]));

/**
 * Whether mail to `domain` has somewhere to go, per RFC 5321 §5.1 and RFC 7505:
 * an MX naming a usable mail host → deliverable; MX records of which none is usable (a null MX,
 * `localhost`, an IP address as a name: mail-host.ts) → undeliverable; NXDOMAIN → undeliverable;
 * no MX but an A or AAAA → deliverable (the implicit MX); neither → undeliverable.
 * A lookup that could not complete is `unknown`: not being able to ask is not a "no".
 */
export async function checkDeliverability(resolver: Resolver, domain: string, signal: AbortSignal, timeoutMs: number): Promise<DeliverabilityResult> {
  const started = Date.now();
  const mx = await resolver.lookup(domain, 'MX', signal);
  if (mx.kind === 'failure') return unknown(`MX ${domain}: ${mx.detail}`);
  if (mx.kind !== 'nodata') return fromMxAnswer(mx);
  // MX and the address lookups share one deadline (DNS_TIMEOUT_MS): what the MX step used is
  // gone. Timers only on this path, so a cached MX answer costs no timer at all.
  const remaining = timeoutMs - (Date.now() - started);
  if (remaining <= 0) return unknown(`address of ${domain}: no time left after the MX lookup`);
  return withDeadline(signal, remaining, (deadline) => implicitMx(resolver, domain, deadline));
}

/**
 * The same answer from the resolver's cache alone, or `undefined` when it would take a query:
 * the request path uses it to skip the deadline machinery for a domain seen recently.
 */
export function cachedDeliverability(resolver: Resolver, domain: string): DeliverabilityResult | undefined {
  const mx = resolver.cached(domain, 'MX');
  if (mx === undefined || mx.kind === 'failure') return undefined;
  if (mx.kind !== 'nodata') return fromMxAnswer(mx);
  const a = resolver.cached(domain, 'A');
  const aaaa = resolver.cached(domain, 'AAAA');
  if (a?.kind === 'records' || aaaa?.kind === 'records') return IMPLICIT_MX;
  // Failures are never cached; both lookups cached and neither has an address: no mail host.
  return a === undefined || aaaa === undefined ? undefined : NO_MAIL_HOST;
}

type MxAnswer = Extract<LookupResult<MailExchange>, { kind: 'records' | 'nxdomain' }>;
/** Keyed by the resolver's cached answer: computed once per answer, gone with it. */
const fromAnswer = new WeakMap<MxAnswer, DeliverabilityResult>();

function fromMxAnswer(mx: MxAnswer): DeliverabilityResult {
  if (mx.kind === 'nxdomain') return NO_MAIL_HOST;
  let result = fromAnswer.get(mx);
  if (result === undefined) {
    // The resolver's records are sorted, capped and frozen: shared as they are, never copied.
    const records = mx.records as MxRecord[];
    const usable = records.filter((r) => isUsableMailHost(r.exchange));
    // RFC 7505 §3: a null MX is the only MX; mixed with real ones, the real ones still take mail.
    // The same for hosts no one can reach: the others take the mail.
    if (usable.length === 0) result = undeliverable(records);
    else result = deliverable(usable.length === records.length ? records : (Object.freeze(usable) as MxRecord[]));
    fromAnswer.set(mx, result);
  }
  return result;
}

/** Aborts at `ms` or when `signal` does; nothing stays attached to `signal` afterwards. */
async function withDeadline<T>(signal: AbortSignal, ms: number, work: (deadline: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = new AbortController();
  const stop = (): void => deadline.abort();
  const timer = setTimeout(stop, ms);
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  try {
    return await work(deadline.signal);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  }
}

/** RFC 5321 §5.1: with no MX, the domain's own address records are its mail host. */
async function implicitMx(resolver: Resolver, domain: string, signal: AbortSignal): Promise<DeliverabilityResult> {
  const [a, aaaa] = await Promise.all([resolver.lookup(domain, 'A', signal), resolver.lookup(domain, 'AAAA', signal)]);
  if (a.kind === 'records' || aaaa.kind === 'records') return IMPLICIT_MX;
  const failed = [a, aaaa].find((r) => r.kind === 'failure');
  if (failed?.kind === 'failure') return unknown(`address of ${domain}: ${failed.detail}`);
  return NO_MAIL_HOST;
}
