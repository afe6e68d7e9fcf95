import type { ParsedEmail } from './address.js';

/**
 * How each provider folds addresses. Gmail ignores dots and `+tags` and treats googlemail.com
 * as gmail.com (https://support.google.com/mail/answer/7436150); the others deliver `+tag`
 * sub-addresses (RFC 5233) to the base mailbox. Google Workspace domains cannot be told from
 * the address alone, so they get the generic treatment.
 */
interface Folding {
  dots: boolean;
  plusTags: boolean;
  domain?: string;
}

const GMAIL: Folding = { dots: true, plusTags: true, domain: 'gmail.com' };
const PLUS: Folding = { dots: false, plusTags: true };

const PROVIDERS: ReadonlyMap<string, Folding> = new Map(Object.entries({
  'gmail.com': GMAIL,
  'googlemail.com': GMAIL,
  'outlook.com': PLUS,
  'hotmail.com': PLUS,
  'hotmail.co.uk': PLUS,
  'hotmail.fr': PLUS,
  'live.com': PLUS,
  'msn.com': PLUS,
  'icloud.com': PLUS,
  'me.com': PLUS,
  'mac.com': PLUS,
  'fastmail.com': PLUS,
  'fastmail.fm': PLUS,
  'proton.me': PLUS,
  'protonmail.com': PLUS,
  'protonmail.ch': PLUS,
  'pm.me': PLUS,
  'yandex.ru': PLUS,
  'yandex.com': PLUS,
  'zoho.com': PLUS,
}));

/**
 * One person's many addresses folded to one form, for spotting repeat sign-ups. The local part is
 * lower-cased for every domain (RFC 5321 lets it be case-sensitive; no mainstream provider is);
 * dots and tags are removed only where the provider is known to ignore them.
 */
export function canonicalAddress(email: Pick<ParsedEmail, 'local' | 'domain'>): string {
  const folding = PROVIDERS.get(email.domain);
  let local = email.local.toLowerCase();
  if (folding?.plusTags) local = beforePlus(local);
  if (folding?.dots) local = local.replaceAll('.', '');
  // A local part that folds to nothing ("+tag@gmail.com") keeps its original form.
  if (local.length === 0) local = email.local.toLowerCase();
  return `${local}@${folding?.domain ?? email.domain}`;
}

/** The local part up to its first `+` (RFC 5233 sub-address), or all of it. */
export function beforePlus(local: string): string {
  const plus = local.indexOf('+');
  return plus < 0 ? local : local.slice(0, plus);
}
