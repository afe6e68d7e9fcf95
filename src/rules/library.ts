import type { FieldPath } from './fields.js';

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
  /** The fact it reads; the rule fires when the fact equals `when`. */
  reads: FieldPath;
  when: boolean | 'present';
}

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
];

export const LIBRARY_IDS = LIBRARY.map((rule) => rule.id) as [string, ...string[]];

export const libraryRule = (id: string): LibraryRule | undefined => LIBRARY.find((rule) => rule.id === id);
