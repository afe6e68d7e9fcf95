import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { TtlCache } from '../dns/cache.js';
import { recordsBytes, stringBytes } from '../dns/records.js';
import { createResolver, type Resolver } from '../dns/resolver.js';
import type { EmailFacts } from './facts.js';
import type { Report } from '../core/ports.js';
import type { EmailInspector } from './facts.js';
import type { ParsedEmail } from './address.js';
import { canonicalAddress } from './canonical.js';
import { cachedDeliverability, checkDeliverability, type DeliverabilityResult } from './deliverability.js';
import { isDisposable, isListedDisposable } from './disposable.js';
import { isRoleAccount } from './role.js';
import { openEmailSources, type EmailData } from './sources.js';
import { suggestDomain } from './typo.js';

export interface EmailInspectorOptions {
  config: Config;
  logger: Logger;
  /** A resolver to use instead of one built from `config.dnsServers` (benchmarks, tests). */
  resolver?: Resolver;
  /** Milliseconds clock for DNS cache expiry and back-off. */
  now?: () => number;
}

/** The inspector plus what tests and operators need beyond the port. */
export interface EmailIntelligence extends EmailInspector {
  /** Re-checks the DATA_DIR lists now instead of at the next poll. */
  refresh(): Promise<void>;
  readonly resolver: Resolver;
}

/** The names listed in `unavailable` when a check could not run. */
export const UNAVAILABLE = { mx: 'email.mx', disposable: 'email.disposable' } as const;

/**
 * E-mail intelligence: deliverability from DNS, disposable / relay / free-provider from lists
 * (and the disposable check from MX hosts too), role account, typo suggestion and canonical form.
 * Lists load before this resolves; DATA_DIR files are polled and swapped in when they change.
 */
export async function createEmailInspector(options: EmailInspectorOptions): Promise<EmailIntelligence> {
  const { config, logger } = options;
  const resolver =
    options.resolver ??
    createResolver({ servers: config.dnsServers, timeoutMs: config.dnsTimeoutMs, ...(options.now ? { now: options.now } : {}) });
  const sources = await openEmailSources({ dataDir: config.dataDir, reloadIntervalMs: config.reloadIntervalMs, logger });

  /** What depends on the domain alone, memoized per domain while its inputs stay the same objects. */
  interface DomainFacts {
    mx: DeliverabilityResult;
    data: EmailData;
    relay: boolean;
    disposable: boolean | null;
    freeProvider: boolean;
    suggested: string | null;
    unavailable: readonly string[];
  }
  // Bounded like the DNS cache it follows, in entries and in estimated bytes (`domainFactsBytes`).
  // No expiry: an entry is good while its answer and lists are the same objects, checked on use.
  const byDomain = new TtlCache<DomainFacts>(resolver.cacheLimits, domainFactsBytes, () => 0);

  function domainFacts(domain: string, mx: DeliverabilityResult): DomainFacts {
    const data = sources.current();
    const known = byDomain.get(domain);
    // `mx` is one object per cached DNS answer and `data` one per loaded list set: a new answer or a
    // reloaded list is a new object, so a memo can never outlive what it was computed from.
    if (known !== undefined && known.mx === mx && known.data === data) return known;
    if (mx.detail !== null) logger.debug({ domain, detail: mx.detail }, 'deliverability unknown');

    const relay = data.disposable.relays.match(domain) !== null;
    const disposable = isDisposable(domain, mx.mx_records, data.disposable);
    const suggested = suggestDomain(domain, data.freeProviders);
    const unavailable: string[] = [];
    if (mx.deliverability === 'unknown') unavailable.push(UNAVAILABLE.mx);
    if (disposable === null) unavailable.push(UNAVAILABLE.disposable);
    const facts: DomainFacts = {
      mx,
      data,
      relay,
      disposable,
      // email-providers also lists throwaway and typo domains (gmial.com): those are not free providers.
      freeProvider: data.freeProviders.has(domain) && !relay && !isListedDisposable(domain, data.disposable) && suggested === null,
      suggested,
      unavailable,
    };
    // An unknown answer is never the same object twice, so not kept.
    if (mx.deliverability !== 'unknown') byDomain.set(domain, facts, Number.POSITIVE_INFINITY);
    return facts;
  }

  /**
   * Estimated bytes of a memo entry: the entry, the facts object and its `unavailable` list (about
   * 300 bytes), the domain and suggestion, and the MX records it keeps alive, counted here too
   * although the DNS cache may hold the same ones: once the DNS cache has let them go, this is
   * what holds them.
   */
  function domainFactsBytes(domain: string, facts: DomainFacts): number {
    const mx = facts.mx.mx_records;
    return 300 + stringBytes(domain) + (facts.suggested === null ? 0 : stringBytes(facts.suggested)) + (mx === null ? 0 : recordsBytes(mx));
  }

  function report(email: ParsedEmail, mx: DeliverabilityResult): Report<EmailFacts> {
    const { domain } = email;
    const known = domainFacts(domain, mx);
    return {
      facts: {
        address: email.address,
        normalized: email.normalized,
        domain,
        canonical: canonicalAddress(email),
        deliverable: mx.deliverability === 'unknown' ? null : mx.deliverability === 'deliverable',
        deliverability: mx.deliverability,
        mx_records: mx.mx_records,
        disposable: known.disposable,
        free_provider: known.freeProvider,
        role_account: isRoleAccount(email.local),
        relay: known.relay,
        suggested_domain: known.suggested,
      },
      unavailable: [...known.unavailable],
    };
  }

  async function inspect(email: ParsedEmail, signal: AbortSignal): Promise<Report<EmailFacts>> {
    return report(email, await checkDeliverability(resolver, email.domain, signal, config.dnsTimeoutMs));
  }

  function inspectCached(email: ParsedEmail): Report<EmailFacts> | undefined {
    const mx = cachedDeliverability(resolver, email.domain);
    return mx === undefined ? undefined : report(email, mx);
  }

  return {
    inspect,
    inspectCached,
    status: () => sources.status(),
    refresh: () => sources.refresh(),
    resolver,
    close: async () => sources.close(),
  };
}

