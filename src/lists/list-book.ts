import { parseEmail } from '../email/address.js';
import { canonicalAddress } from '../email/canonical.js';
import type { EvaluationRequest } from '../request/evaluation-request.js';
import { keyOf, parseNetwork } from '../ip/numeric.js';
import { IpRangeTable } from '../ip/ranges.js';
import { LIST_NAMES, NO_LIST_MATCHES, type ListFacts, type ListKind, type ListMatch, type ListName } from './facts.js';

/**
 * Every account's lists in memory: what an evaluation checks, without I/O. Swapped whole when the
 * store's change counter moves (like keys and rule sets), so an entry added or removed on one
 * replica is served by every replica within RELOAD_INTERVAL_MS. Expiry is checked at match time.
 */
export interface StoredListEntry {
  id: number;
  account_id: string;
  list: ListName;
  kind: ListKind;
  value: string;
  reason: string;
  expires_at: number | null;
}

interface Entry extends ListMatch {
  expiresAt: number | null;
}

interface OneList {
  exact: Map<string, Entry>;
  ips: IpRangeTable<Entry> | null;
}

type AccountLists = Record<ListName, OneList>;

/** Exact values are keyed with their kind: `email:a@b.c`, `domain:b.c`, `device:…`, `user:…`. */
const exactKey = (kind: string, value: string) => `${kind}:${value}`;

export interface ListBook {
  check(account: string, request: EvaluationRequest, now: number): ListFacts;
  replace(entries: readonly StoredListEntry[]): void;
  /** Entries held (live or not yet pruned), for the source status. */
  size(): number;
}

export function createListBook(entries: readonly StoredListEntry[] = []): ListBook {
  let accounts = build(entries);
  let size = entries.length;
  return {
    check(account, request, now) {
      const lists = accounts.get(account);
      if (lists === undefined) return NO_LIST_MATCHES;
      return { block: matches(lists.block, request, now), allow: matches(lists.allow, request, now) };
    },
    replace(next) {
      accounts = build(next);
      size = next.length;
    },
    size: () => size,
  };
}

function build(entries: readonly StoredListEntry[]): Map<string, AccountLists> {
  const accounts = new Map<string, AccountLists>();
  const ranges = new Map<string, Array<{ bits: number; text: string; entry: Entry }>>();
  for (const e of entries) {
    let lists = accounts.get(e.account_id);
    if (lists === undefined) accounts.set(e.account_id, (lists = { block: { exact: new Map(), ips: null }, allow: { exact: new Map(), ips: null } }));
    const entry: Entry = { id: e.id, kind: e.kind, value: e.value, reason: e.reason, expiresAt: e.expires_at };
    if (e.kind === 'ip') {
      const key = `${e.account_id}\u0000${e.list}`;
      let list = ranges.get(key);
      if (list === undefined) ranges.set(key, (list = []));
      const slash = e.value.indexOf('/');
      list.push({ bits: slash === -1 ? 128 : Number(e.value.slice(slash + 1)) + (e.value.includes(':') ? 0 : 96), text: e.value, entry });
    } else {
      lists[e.list].exact.set(exactKey(e.kind, e.value), entry);
      // An address also lists its canonical form: at Gmail, jane.doe and janedoe+shop are one mailbox.
      if (e.kind === 'email') {
        const parsed = parseEmail(e.value);
        if (!('error' in parsed)) lists[e.list].exact.set(exactKey('canonical', canonicalAddress(parsed)), entry);
      }
    }
  }
  for (const [key, list] of ranges) {
    const [account, name] = key.split('\u0000') as [string, ListName];
    // The narrowest range first: where ranges overlap, the most specific entry is the one reported.
    list.sort((a, b) => b.bits - a.bits);
    const builder = IpRangeTable.builder<Entry>();
    for (const { text, entry } of list) builder.add(parseNetwork(text)!, entry);
    accounts.get(account)![name].ips = builder.build('first');
  }
  return accounts;
}

function matches(list: OneList, request: EvaluationRequest, now: number): ListMatch[] {
  const found: ListMatch[] = [];
  const add = (entry: Entry | undefined) => {
    if (entry === undefined || (entry.expiresAt !== null && entry.expiresAt <= now) || found.some((f) => f.id === entry.id)) return;
    found.push({ id: entry.id, kind: entry.kind, value: entry.value, reason: entry.reason });
  };
  const { exact } = list;
  if (exact.size > 0) {
    const email = request.parsedEmail;
    add(exact.get(exactKey('email', email.normalized.toLowerCase())));
    add(exact.get(exactKey('canonical', canonicalAddress(email))));
    // The domain and every parent: listing example.com lists mail.example.com.
    for (let domain = email.domain; ; ) {
      add(exact.get(exactKey('domain', domain)));
      const dot = domain.indexOf('.');
      if (dot === -1) break;
      domain = domain.slice(dot + 1);
    }
    const device = request.device_intelligence?.device_hash;
    if (device !== undefined) add(exact.get(exactKey('device', device)));
    const user = request.user?.user_id;
    if (user !== undefined) add(exact.get(exactKey('user', user)));
  }
  if (list.ips !== null) {
    add(list.ips.get(keyOf(request.parsedIp)));
    // An IPv6 address that carries an IPv4 client is checked as that address too.
    if (request.parsedIp.embedded !== null) add(list.ips.get(keyOf(request.parsedIp.embedded)));
  }
  return found.length === 0 ? EMPTY : found;
}

const EMPTY: ListMatch[] = [];

export { LIST_NAMES };
