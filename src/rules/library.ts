import type { VelocityKey } from '../history/velocity.js';
import type { RulePath } from './fields.js';
import type { ConditionInput } from './file-schema.js';

/**
 * The built-in checks, each as a rule a file enables by id. The id is also the name of the signal
 * reported in the response's `signals` whenever the check is true, whether or not a rule file enables
 * it. Names are what the response shows: the spec's five (§1.6) verbatim.
 *
 * Default scores, with the default bands (approve < 20 <= review < 40 <= decline): a signal that on
 * its own means abuse in almost every product declines (40); one that is suspicious but common among
 * real users sends to review (20-30); context that only matters combined with others stays low.
 */
export interface LibraryRule {
  id: string;
  name: string;
  description: string;
  defaultScore: number;
  /** The fact it reads; the rule fires when the fact equals `when` (unless `condition` says more). */
  reads: RulePath;
  when: boolean | 'present';
  /** Thresholds a rule file may set (`params:`), with their defaults and bounds. */
  parameters?: Readonly<Record<string, LibraryParameter>>;
  /** The condition, from the parameters (defaults filled in), when it is more than `reads` equals `when`. */
  condition?: (params: Readonly<Record<string, number>>) => ConditionInput;
  /** A velocity counter it reads, defined for the file that enables it (named as the rule). */
  counter?: { name: string; key: VelocityKey; window: string };
}

export interface LibraryParameter {
  description: string;
  default: number;
  min: number;
  max: number;
}

const threshold = (description: string, value: number, max = 1_000_000): LibraryParameter => ({ description, default: value, min: 1, max });

export const LIBRARY: readonly LibraryRule[] = [
  {
    id: 'email_undeliverable',
    name: 'Email is not deliverable',
    description: 'The domain has no mail server: nobody can receive mail at this address.',
    defaultScore: 30,
    reads: 'email.deliverable',
    when: false,
  },
  {
    id: 'email_disposable',
    name: 'Email address is disposable',
    description: 'The domain hands out throw-away addresses, the usual tool for fake and repeat sign-ups.',
    defaultScore: 40,
    reads: 'email.disposable',
    when: true,
  },
  {
    id: 'email_free_provider',
    name: 'Email address is from a free provider',
    description: 'A free mailbox provider: normal for consumers, a weak signal where business addresses are expected.',
    defaultScore: 5,
    reads: 'email.free_provider',
    when: true,
  },
  {
    id: 'email_role_account',
    name: 'Email address is a role account',
    description: 'A shared role address (admin@, support@...) rather than a person.',
    defaultScore: 10,
    reads: 'email.role_account',
    when: true,
  },
  {
    id: 'email_relay',
    name: 'Email address is a forwarding relay',
    description: 'A privacy relay (Apple Hide My Email, Firefox Relay...): legitimate, but hides the real mailbox.',
    defaultScore: 5,
    reads: 'email.relay',
    when: true,
  },
  {
    id: 'email_typo',
    name: 'Email domain is a likely typo',
    description: 'The domain looks like a mistyped popular one (gmial.com): the user will not get the mail.',
    defaultScore: 10,
    reads: 'email.suggested_domain',
    when: 'present',
  },
  {
    id: 'ip_proxy',
    name: 'IP address belongs to a Proxy Server',
    description: 'A known open or anonymising proxy hides where the user really is.',
    defaultScore: 25,
    reads: 'ip.is_proxy',
    when: true,
  },
  {
    id: 'ip_datacenter',
    name: 'Data center IP',
    description: 'A hosting or cloud range: scripts and bots, rarely a person at a browser.',
    defaultScore: 20,
    reads: 'ip.is_datacenter',
    when: true,
  },
  {
    id: 'ip_tor',
    name: 'IP address is a Tor exit node',
    description: 'Traffic leaves the Tor network here: anonymous by design, and common in abuse.',
    defaultScore: 40,
    reads: 'ip.is_tor',
    when: true,
  },
  {
    id: 'ip_vpn',
    name: 'IP address belongs to a VPN',
    description: 'A commercial VPN exit: privacy-minded users use them too, so it weighs less than a proxy.',
    defaultScore: 15,
    reads: 'ip.is_vpn',
    when: true,
  },
  {
    id: 'ip_bogon',
    name: 'IP address is not publicly routable',
    description:
      'A private or reserved address: usually a missing proxy header (TRUST_PROXY) rather than the user, so low by default.',
    defaultScore: 5,
    reads: 'ip.is_bogon',
    when: true,
  },
  {
    id: 'device_cookies_disabled',
    name: 'Browser has cookies disabled',
    description:
      'The device SDK reports cookies off: common in scripted and throw-away browser profiles, but privacy-minded people do it too, so low on its own. Does not fire when the field is not sent.',
    defaultScore: 10,
    reads: 'device_intelligence.cookie_enabled',
    when: false,
  },
  // Behaviour (history.*): unknown, so never fired, when the store did not answer; but a partial
  // history's event counts are lower bounds, so ip_velocity still fires on what this replica counted.
  {
    id: 'ip_velocity',
    name: 'Many events from this IP address',
    description: 'Many evaluations from one address (an IPv6 address: its /64) in an hour or a day: scripted sign-ups, or one person making many accounts. Offices, campuses and mobile carriers share addresses too, so it reviews rather than declines.',
    defaultScore: 25,
    reads: 'history.ip.events_1h',
    when: true,
    parameters: {
      events_1h: threshold('Fires from this many events in the last hour (this one included).', 5),
      events_24h: threshold('…or from this many in the last 24 hours.', 20),
    },
    condition: (p) => ({ any: [{ field: 'history.ip.events_1h', gte: p.events_1h! }, { field: 'history.ip.events_24h', gte: p.events_24h! }] }),
  },
  {
    id: 'device_multi_account',
    name: 'Device used by many accounts',
    description: 'One device behind many accounts in 30 days: an account farm, or a shared family computer at the low end.',
    defaultScore: 30,
    reads: 'history.device.accounts_30d',
    when: true,
    parameters: { accounts_30d: threshold('Fires from this many distinct accounts on the device in 30 days (this one included).', 4, 100) },
    condition: (p) => ({ field: 'history.device.accounts_30d', gte: p.accounts_30d! }),
  },
  {
    id: 'user_new_device',
    name: 'New device for this user',
    description: 'A device this user was never seen with (within HISTORY_DAYS): the first sign of a taken-over account, and also of a new phone. Not while the user has no device on record (the first event, or earlier events sent no device hash), nor without a device hash.',
    defaultScore: 15,
    reads: 'history.user.new_device',
    when: true,
  },
  {
    id: 'user_new_country',
    name: 'New country for this user',
    description: 'A country this user was never seen in (within HISTORY_DAYS): travel, or someone else. Not while the user has no country on record.',
    defaultScore: 15,
    reads: 'history.user.new_country',
    when: true,
  },
  {
    id: 'impossible_travel',
    name: 'Impossible travel',
    description: 'The least distance from the user\'s previous event, over the time between them, is faster than a flight. Not when both addresses are of one network and country (a carrier re-routing), nor when either is a known VPN, proxy, Tor exit or hosting network (its own signal); unknown when either place, the networks, or whether either is anonymous (a source not loaded) are.',
    defaultScore: 40,
    reads: 'history.user.previous.speed_kmh',
    when: true,
    parameters: { speed_kmh: threshold('Fires from this speed in km/h (a long-haul flight cruises at about 900).', 1000, 1_000_000) },
    condition: (p) => ({
      all: [
        { field: 'history.user.previous.speed_kmh', gte: p.speed_kmh! },
        { field: 'history.user.previous.same_network', equals: false },
        { field: 'history.user.previous.anonymous', equals: false },
      ],
    }),
  },
  {
    id: 'account_sharing',
    name: 'Account used from many devices or countries',
    description: 'One account on many devices in 30 days, or in many countries in a day: credentials shared or sold.',
    defaultScore: 25,
    reads: 'history.user.devices_30d',
    when: true,
    parameters: {
      devices_30d: threshold('Fires from this many distinct devices of the user in 30 days.', 5, 100),
      countries_24h: threshold('…or from this many distinct countries in 24 hours.', 3, 100),
    },
    condition: (p) => ({ any: [{ field: 'history.user.devices_30d', gte: p.devices_30d! }, { field: 'history.user.countries_24h', gte: p.countries_24h! }] }),
  },
  {
    id: 'domain_velocity',
    name: 'Many sign-ups from one e-mail domain',
    description: 'Many evaluations of the file\'s event type from addresses of one e-mail domain in the last hour, where the domain is not a free mailbox provider (gmail.com and the like, where thousands sign up every hour): a domain registered for a wave of fake accounts. A company whose staff all join at once looks the same, so it reviews. Counted by its own velocity counter (docs/rules.md "Velocity counters"); unknown when the store did not answer or the free-provider list is not loaded.',
    defaultScore: 25,
    reads: 'velocity.domain_velocity',
    when: true,
    parameters: { signups_1h: threshold('Fires from this many events from the domain in the last hour (this one included).', 20, 100_000) },
    counter: { name: 'domain_velocity', key: 'email.domain', window: '1h' },
    condition: (p) => ({ all: [{ field: 'email.free_provider', equals: false }, { field: 'velocity.domain_velocity', gte: p.signups_1h! }] }),
  },
  // The account's own lists: always known (served from memory).
  {
    id: 'list_block',
    name: "On the account's block list",
    description: 'The e-mail address, its domain, the IP address (or a CIDR range holding it), the device or the user id is on the account\'s block list.',
    defaultScore: 100,
    reads: 'lists.blocked',
    when: true,
  },
  {
    id: 'list_allow',
    name: "On the account's allow list",
    description: 'On the account\'s allow list: a negative score, so one or two weaker signals approve; a block-list entry (100) still declines.',
    defaultScore: -50,
    reads: 'lists.allowed',
    when: true,
  },
];

export const LIBRARY_IDS = LIBRARY.map((rule) => rule.id) as [string, ...string[]];

export const libraryRule = (id: string): LibraryRule | undefined => LIBRARY.find((rule) => rule.id === id);

/** The parameters with the file's values over the defaults. */
export function libraryParams(rule: LibraryRule, given: Readonly<Record<string, number>> = {}): Record<string, number> {
  const params: Record<string, number> = {};
  for (const [name, parameter] of Object.entries(rule.parameters ?? {})) params[name] = given[name] ?? parameter.default;
  return params;
}
