import type { MxRecord } from './facts.js';
import type { DomainMatcher } from './domain-list.js';

export interface DisposableData {
  /** Bundled lists plus `DATA_DIR/disposable-domains.txt`. */
  listed: DomainMatcher;
  /** `DATA_DIR/disposable-allowlist.txt`: the operator's word beats every list and the MX check. */
  allowed: DomainMatcher;
  /** Mail hosts of disposable services (built in plus `DATA_DIR/disposable-mx-hosts.txt`). */
  mxHosts: DomainMatcher;
  relays: DomainMatcher;
  /** Big mainstream providers not on any disposable list: known not disposable without DNS. */
  mainstream: DomainMatcher;
}

/** Whether the domain is on a disposable list (and not allowed). No DNS: usable on its own. */
export function isListedDisposable(domain: string, data: DisposableData): boolean {
  return data.allowed.match(domain) === null && data.relays.match(domain) === null && data.listed.match(domain) !== null;
}

/**
 * `true` on a list hit (definite, whatever DNS says) or when any of its mail hosts belongs to a
 * disposable service; `false` for relays, allowed and mainstream domains, or when the mail hosts
 * are known and none is disposable. `null` when no list has it and its MX could not be looked up:
 * the MX check could not run, so "not disposable" would be a guess.
 *
 * Any host, not every one, and not only the most preferred: a sender tries the next host when one
 * does not answer (RFC 5321 §5.1), so a dummy host beside a throw-away service's, as backup or as
 * primary, still lets mail reach the throw-away inbox. No real mail domain hands any of its mail
 * to such a service. `mx` is the 10 most preferred hosts (dns/records.ts), more than senders try.
 */
export function isDisposable(domain: string, mx: MxRecord[] | null, data: DisposableData): boolean | null {
  if (data.allowed.match(domain) !== null || data.relays.match(domain) !== null) return false;
  if (data.listed.match(domain) !== null) return true;
  if (data.mainstream.has(domain)) return false;
  if (mx === null) return null;
  return mx.some((r) => data.mxHosts.match(r.exchange) !== null);
}
