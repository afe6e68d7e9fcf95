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
 * The major provider the domain was probably meant to be, or `null`. One edit (insert, delete,
 * substitute, or swap two neighbours: gmial.com → gmail.com) and a single best candidate; a domain
 * that is itself a major provider is never corrected.
 */
export function suggestDomain(domain: string): string | null {
  const known = remembered.get(domain);
  if (known !== undefined) return known;
  const candidates = MAJOR_PROVIDERS.includes(domain)
    ? []
    : MAJOR_PROVIDERS.filter((p) => p.length >= MIN_LENGTH && editDistance(domain, p, 1) <= 1);
  const suggestion = candidates.length === 1 ? candidates[0]! : null;
  // Traffic repeats a small set of domains: remember answers, forgetting all at the bound.
  if (remembered.size >= REMEMBERED_MAX) remembered.clear();
  remembered.set(domain, suggestion);
  return suggestion;
}

const REMEMBERED_MAX = 10_000;
const remembered = new Map<string, string | null>();

/** Optimal string alignment distance, stopping early once it exceeds `limit`. */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prevPrev[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length]!;
}
