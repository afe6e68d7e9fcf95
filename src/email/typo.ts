/**
 * The providers most sign-ups use: a domain one edit away from one of these is almost always a
 * typo. Only these are suggested, so an unusual but real domain is never "corrected".
 */
export const MAJOR_PROVIDERS: readonly string[] = [
  'aol.com',
  'comcast.net',
  'gmail.com',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'googlemail.com',
  'hotmail.co.uk',
  'hotmail.com',
  'hotmail.fr',
  'icloud.com',
  'live.com',
  'mail.ru',
  'me.com',
  'msn.com',
  'outlook.com',
  'proton.me',
  'protonmail.com',
  'qq.com',
  'web.de',
  'yahoo.co.uk',
  'yahoo.com',
  'yahoo.fr',
  'yandex.ru',
];

/** Below this length one edit reaches too many real domains (`me.com` → `mo.com`, `mc.com`). */
const MIN_LENGTH = 8;

/**
 * The major provider the domain was probably meant to be, or `null`. A domain `known` as a real
 * provider (the free-provider list: `ymail.com`, `mail.com`) is never corrected, however close to
 * a major one it is.
 */
export function suggestDomain(domain: string, known: { has(domain: string): boolean }): string | null {
  if (known.has(domain)) return null;
  let suggestion = remembered.get(domain);
  if (suggestion === undefined) {
    suggestion = majorProviderNear(domain);
    // Traffic repeats a small set of domains: remember answers, forgetting all at the bound.
    if (remembered.size >= REMEMBERED_MAX) remembered.clear();
    remembered.set(domain, suggestion);
  }
  return suggestion;
}

/**
 * The one major provider within one edit (insert, delete, substitute, or swap two neighbours:
 * gmial.com → gmail.com) of the domain, or `null`: none, several, or the domain is itself one.
 */
export function majorProviderNear(domain: string): string | null {
  if (MAJOR_PROVIDERS.includes(domain)) return null;
  const candidates = MAJOR_PROVIDERS.filter((p) => p.length >= MIN_LENGTH && withinOneEdit(domain, p));
  return candidates.length === 1 ? candidates[0]! : null;
}

const REMEMBERED_MAX = 10_000;
const remembered = new Map<string, string | null>();

/**
 * Whether `b` is `a` with at most one edit: a character inserted, deleted or substituted, or two
 * neighbours swapped (the optimal string alignment distance is at most 1). Linear, without the
 * distance table: it runs for every major provider on every new domain and vendor list entry.
 */
export function withinOneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p += 1;
  if (a.length === b.length) {
    if (p === a.length) return true;
    const swapped = a[p] === b[p + 1] && a[p + 1] === b[p] && a.slice(p + 2) === b.slice(p + 2);
    return swapped || a.slice(p + 1) === b.slice(p + 1);
  }
  return a.length > b.length ? a.slice(p + 1) === b.slice(p) : b.slice(p + 1) === a.slice(p);
}
