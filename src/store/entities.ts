import { sql } from 'kysely';
import type { ListKind } from '../lists/facts.js';
import { addressOfKey } from './decisions.js';
import type { Engine } from './engine.js';
import type { ListEntry } from './lists.js';

/**
 * An entity's page (issue 27, PRODUCT.md "Review"): an e-mail address, domain, IP address, device or
 * user as the evaluation log knows it. Every read is an index range of migration 0002 (account,
 * column, id): first and last seen are the two ends of the range, and what the entity is linked to
 * (the users of a device or an IP, the devices and countries of a user) is read from its latest
 * ENTITY_SCAN evaluations only, so a page costs the same for an address seen a million times. The
 * links come from the log, which holds the values as evaluated; behaviour history keeps only keyed
 * hashes of them, which can be counted but not shown or linked to, so it is not read here.
 */
export const ENTITY_KINDS = ['email', 'domain', 'ip', 'device', 'user'] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** How many of an entity's latest evaluations its links and counts are read from. */
export const ENTITY_SCAN = 500;
/** At most this many of each kind of link are answered (the most recent first). */
export const MAX_LINKS = 50;

const COLUMN = { email: 'email', domain: 'email_domain', ip: 'ip_key', device: 'device_hash', user: 'user_id' } as const;

export interface EntityLinks {
  emails: string[];
  domains: string[];
  ips: string[];
  devices: string[];
  users: string[];
  /** ISO country codes the IP addresses were placed in (from the answers as sent). */
  countries: string[];
}

export interface EntityOverview {
  first_seen: number | null;
  last_seen: number | null;
  /** How many evaluations the counts and links below were read from (at most ENTITY_SCAN, the latest). */
  scanned: number;
  states: { approve: number; review: number; decline: number };
  labels: { fraud: number; legit: number };
  links: EntityLinks;
  /** Block and allow list entries whose value is this entity's (an exact match, expired ones included). */
  list_entries: ListEntry[];
}

export class Entities {
  constructor(private readonly engine: Engine) {}

  /** `key` is the value as the log stores it: the normalised e-mail, the A-label domain, the IP's log key, the device hash, the user id. */
  async overview(account: string, kind: EntityKind, key: string, listValue: string): Promise<EntityOverview> {
    const db = this.engine.db;
    const column = COLUMN[kind];
    const range = () => db.selectFrom('evaluations as e').where('e.account_id', '=', account).where(`e.${column}`, '=', key);
    // Postgres stores documents as jsonb, SQLite as text: each reads the country its own way.
    const country = this.engine.kind === 'postgres'
      ? sql<string | null>`e.response -> 'ip' ->> 'country_code'`
      : sql<string | null>`json_extract(e.response, '$.ip.country_code')`;
    const [first, latest, entries] = await Promise.all([
      range().select('e.evaluated_at').orderBy('e.id', 'asc').limit(1).executeTakeFirst(),
      range().leftJoin('labels as l', (join) => join.onRef('l.account_id', '=', 'e.account_id').onRef('l.evaluation_id', '=', 'e.id'))
        .select(['e.id', 'e.evaluated_at', 'e.state', 'e.email', 'e.email_domain', 'e.ip_key', 'e.device_hash', 'e.user_id', 'l.label', country.as('country')])
        .orderBy('e.id', 'desc').limit(ENTITY_SCAN).execute(),
      db.selectFrom('list_entries').selectAll().where('account_id', '=', account).where('kind', '=', kind as ListKind).where('value', '=', listValue)
        .orderBy('id', 'desc').execute(),
    ]);
    const states = { approve: 0, review: 0, decline: 0 };
    const labels = { fraud: 0, legit: 0 };
    const links: Record<keyof EntityLinks, Set<string>> = { emails: new Set(), domains: new Set(), ips: new Set(), devices: new Set(), users: new Set(), countries: new Set() };
    const link = (set: Set<string>, value: string | null) => {
      if (value !== null && value !== '' && set.size < MAX_LINKS) set.add(value);
    };
    for (const row of latest) {
      if (row.state === 'approve' || row.state === 'review' || row.state === 'decline') states[row.state] += 1;
      if (row.label === 'fraud' || row.label === 'legit') labels[row.label] += 1;
      if (kind !== 'email') link(links.emails, row.email);
      if (kind !== 'domain' && kind !== 'email') link(links.domains, row.email_domain);
      if (kind !== 'ip') link(links.ips, addressOfKey(row.ip_key));
      if (kind !== 'device') link(links.devices, row.device_hash);
      if (kind !== 'user') link(links.users, row.user_id);
      link(links.countries, typeof row.country === 'string' ? row.country : null);
    }
    return {
      first_seen: first ? Number(first.evaluated_at) : null,
      last_seen: latest[0] ? Number(latest[0].evaluated_at) : null,
      scanned: latest.length,
      states, labels,
      links: Object.fromEntries(Object.entries(links).map(([name, set]) => [name, [...set]])) as unknown as EntityLinks,
      list_entries: entries.map((row) => ({ ...row, id: Number(row.id) })),
    };
  }
}
