/**
 * The request mixes of issue 24, shared by `npm run bench`, bench/rounds.ts and bench/profile.ts:
 * person `i`'s sign-up (an e-mail, a user and a device of their own), from one IP unless given.
 * The same `i` every request is one person repeated; a new `i` every request is a new person every
 * request (an account farm's traffic, or a sign-up campaign behind one NAT address).
 */
export function personBody(i: number, domain: string, ip = '81.2.69.160'): string {
  return JSON.stringify({
    ip, email: `user${i}@${domain}`, event_type: 'account_register',
    user: { user_id: `u-${i}`, first_name: 'Jane', last_name: 'Doe' },
    device_intelligence: { device_hash: (i + 1).toString(16).padStart(64, '0') },
  });
}

/**
 * A crowd: a new person every request, each from an address of their own (IPv4 in 5.0.0.0/8, outside
 * the bench data set's generated lists), so nothing the service remembers reaches a rule's threshold
 * and every answer is `approve`. Beside the two mixes above, it shows what remembering costs when it
 * does not change the answer (the one-address mixes pass `ip_velocity` and answer `review`).
 */
export function crowdBody(i: number, domain: string): string {
  return personBody(i, domain, `5.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`);
}

export type Mix = 'same' | 'new' | 'crowd';
const MIXES: readonly Mix[] = ['same', 'new', 'crowd'];

/** A `--mix` option: mixes, comma-separated, `both` for same and new; an unknown name throws. */
export function parseMixes(option: string): Mix[] {
  const mixes = option.split(',').flatMap((mix) => (mix === 'both' ? ['same', 'new'] : [mix]));
  for (const mix of mixes) if (!MIXES.includes(mix as Mix)) throw new Error(`--mix: ${mix} is not one of both, ${MIXES.join(', ')}`);
  return mixes as Mix[];
}

/** The mix's request for person `i` (one person repeated is person 7 whatever `i`). */
export function mixBody(mix: Mix, i: number, domain: string): string {
  if (mix === 'same') return personBody(7, domain);
  return mix === 'crowd' ? crowdBody(i, domain) : personBody(i, domain);
}
