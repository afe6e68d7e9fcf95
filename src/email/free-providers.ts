import { parse } from 'tldts';
import { publicSuffixOf } from './public-suffix.js';

/**
 * What `email-providers` (its all.json, ~8,700 domains gathered from sign-up data) and `freemail`
 * (free.txt, ~4,500 domains from public free-provider lists: regional providers all.json lacks,
 * `lenta.ru`, `onet.eu`, `live.com.my`) get wrong, found
 * by checking its most common entries by hand against the providers' own pages. The vendor list
 * stays the base, refreshed by upgrading the package; the lists below and the rules of
 * `curateFreeProviders` correct it. A domain added here needs a reason a reviewer can check.
 */

/** Free mailbox providers the vendor list lacks (each is the provider's own published domain). */
export const FREE_PROVIDER_ADDITIONS: readonly string[] = [
  // Tuta (Tutanota)
  'tuta.com',
  'tuta.io',
  'tutamail.com',
  'tutanota.com',
  'tutanota.de',
  'keemail.me',
  // GMX country domains
  'gmx.ch',
  'gmx.co.uk',
  'gmx.es',
  'gmx.us',
  // Yandex, Mail.ru
  'yandex.by',
  'yandex.kz',
  'internet.ru',
  // Others
  '139.com', // China Mobile
  '189.cn', // China Telecom
  'aol.de',
  'aol.fr',
  'disroot.org',
  'fastmail.com',
  'kakao.com',
  'mail.bg',
  'mail.de',
  'op.pl', // Onet
  'posteo.de',
  'posteo.net',
  'riseup.net',
  'sohu.com',
  'ziggo.nl',
  'zohomail.com',
  'zohomail.eu',
];

/**
 * Real providers one edit away from a major one (`ymail.com` → `gmail.com`): without this list they
 * would be taken for typo domains, which the vendor list also carries (`gmial.com`, `hotmial.com`).
 */
export const REAL_NEAR_MAJOR: readonly string[] = ['email.com', 'hotmail.gr', 'mail.com', 'yahoo.gr', 'ymail.com'];

/** On the vendor list, but nobody gets a free mailbox there: companies, sites, tools, placeholders. */
export const NOT_FREE_PROVIDERS: readonly string[] = [
  'alibaba.com', // the company; its mail service is aliyun.com
  'ancestry.com',
  'anonymize.com',
  'bt.com', // BT Group itself; its customers are on btinternet.com
  'casino.com',
  'clerk.com',
  'comcast.com', // Comcast the company; its customers are on comcast.net
  'dnsmadeeasy.com',
  'easypost.com',
  'facebook.com', // @facebook.com addresses ended in 2014
  'hidemyass.com', // a VPN
  'mail-tester.com', // a deliverability test tool
  'mydomain.com',
  'name.com', // a registrar
  'oath.com', // Verizon Media's corporate domain
  'parrot.com',
  'privacy.net',
  'saudia.com', // an airline
  'singpost.com',
  'techspot.com',
  'test.com',
  'test.de',
  'www.com',
  'yourdomain.com',
];

/** RFC 2606 and RFC 6761 names: never anyone's mailbox provider. */
const RESERVED = /(^|\.)(example|invalid|localhost|test)$|^example\.(com|net|org)$/;
/** Second-level labels of academic, government and military registries (`ac.uk`, `edu.au`, `gov.pl`). */
const INSTITUTIONAL_SLD = new Set(['ac', 'edu', 'gob', 'gouv', 'gov', 'govt', 'k12', 'mil', 'sch']);
const INSTITUTIONAL_TLD = new Set(['edu', 'gov', 'mil']);

/**
 * Whether a domain belongs to a university, school or public body (by its public suffix: `ox.ac.uk`,
 * `nus.edu.sg`, `mit.edu`): their mailboxes are given to members, never to the public, so such a
 * domain is not a free provider, whatever a vendor list says.
 */
export function isInstitutional(domain: string): boolean {
  const labels = publicSuffixOf(domain).split('.');
  return INSTITUTIONAL_TLD.has(labels.at(-1)!) || (labels.length >= 2 && INSTITUTIONAL_SLD.has(labels.at(-2)!));
}

/** Whether the domain ends in a suffix the Public Suffix List knows (vendor lists carry `check.com12`, `email.tst`). */
function hasKnownSuffix(domain: string): boolean {
  const parsed = parse(domain, { allowPrivateDomains: true, extractHostname: false, validateHostname: false, detectIp: false });
  return parsed.isIcann === true || parsed.isPrivate === true;
}

/** The vendor list corrected: a curated entry is kept, a wrong or institutional one dropped. */
export function curateFreeProviders(vendor: readonly string[], isTypoOfMajor: (domain: string) => boolean): string[] {
  const wrong = new Set(NOT_FREE_PROVIDERS);
  const curated = new Set([...FREE_PROVIDER_ADDITIONS, ...REAL_NEAR_MAJOR]);
  const kept = vendor.filter((d) => curated.has(d) || (!wrong.has(d) && !RESERVED.test(d) && hasKnownSuffix(d) && !isInstitutional(d) && !isTypoOfMajor(d)));
  return [...new Set([...kept, ...curated])];
}
