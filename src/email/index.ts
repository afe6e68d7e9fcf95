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
    const mx = await checkDeliverability(resolver, domain, signal, config.dnsTimeoutMs);
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

