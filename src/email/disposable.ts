import type { MxRecord } from '../evaluation/facts.js';
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
 * `true` on a list hit (definite, whatever DNS says) or when every MX host belongs to a disposable
 * service; `false` for relays, allowed and mainstream domains, or when the MX hosts are known and
 * none is disposable. `null` when no list has it and its MX could not be looked up: the MX check
 * could not run, so "not disposable" would be a guess.
 */
export function isDisposable(domain: string, mx: MxRecord[] | null, data: DisposableData): boolean | null {
  if (data.allowed.match(domain) !== null || data.relays.match(domain) !== null) return false;
  if (data.listed.match(domain) !== null) return true;
  if (data.mainstream.has(domain)) return false;
  if (mx === null) return null;
  const hosts = mx.map((r) => r.exchange).filter((h) => h !== '.');
  return hosts.length > 0 && hosts.every((h) => data.mxHosts.match(h) !== null);
}
