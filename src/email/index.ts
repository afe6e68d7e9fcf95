import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { createResolver, type Resolver } from '../dns/resolver.js';
import type { EmailFacts, Report } from '../evaluation/facts.js';
import type { EmailInspector } from '../evaluation/ports.js';
import type { ParsedEmail } from './address.js';
import { canonicalAddress } from './canonical.js';
import { checkDeliverability } from './deliverability.js';
import { isDisposable, isListedDisposable } from './disposable.js';
import { isRoleAccount } from './role.js';
import { openEmailSources } from './sources.js';
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

  async function inspect(email: ParsedEmail, signal: AbortSignal): Promise<Report<EmailFacts>> {
    const { domain } = email;
    const data = sources.current();
    const mx = await withDeadline(signal, config.dnsTimeoutMs, (deadline) => checkDeliverability(resolver, domain, deadline));
    if (mx.detail !== null) logger.debug({ domain, detail: mx.detail }, 'deliverability unknown');

    const relay = data.disposable.relays.match(domain) !== null;
    const disposable = isDisposable(domain, mx.mx_records, data.disposable);
    const suggested = suggestDomain(domain);
    // email-providers also lists throwaway and typo domains (gmial.com): those are not free providers.
    const freeProvider = data.freeProviders.has(domain) && !relay && !isListedDisposable(domain, data.disposable) && suggested === null;

    const unavailable: string[] = [];
    if (mx.deliverability === 'unknown') unavailable.push(UNAVAILABLE.mx);
    if (disposable === null) unavailable.push(UNAVAILABLE.disposable);
    return {
      facts: {
        address: email.address,
        normalized: email.normalized,
        domain,
        canonical: canonicalAddress(email),
        deliverable: mx.deliverability === 'unknown' ? null : mx.deliverability === 'deliverable',
        deliverability: mx.deliverability,
        mx_records: mx.mx_records,
        disposable,
        free_provider: freeProvider,
        role_account: isRoleAccount(email.local),
        relay,
        suggested_domain: suggested,
      },
      unavailable,
    };
  }

  return {
    inspect,
    status: () => sources.status(),
    refresh: () => sources.refresh(),
    resolver,
    close: async () => sources.close(),
  };
}

/**
 * The e-mail's DNS work (MX, then A/AAAA for an implicit MX) shares one `DNS_TIMEOUT_MS` deadline,
 * and stops earlier if the evaluation's own signal fires.
 */
async function withDeadline<T>(signal: AbortSignal, ms: number, work: (deadline: AbortSignal) => Promise<T>): Promise<T> {
  // Hand-rolled rather than AbortSignal.any: nothing stays attached to the caller's signal afterwards.
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
