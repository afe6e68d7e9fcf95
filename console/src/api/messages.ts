/**
 * The API's field messages are written for developers where they are zod's own ("Too small:
 * expected string to have >=1 characters"): said for people here ("Enter a value"). Messages the
 * API wrote itself ("must be an e-mail address") pass unchanged.
 */
export function forPeople(message: string): string {
  if (/^Too small: expected string to have >=1 characters?$/.test(message) || /^Invalid input: expected \w+, received undefined$/.test(message)) return 'Enter a value';
  const short = /^Too small: expected string to have >=(\d+) characters$/.exec(message);
  if (short) return `Enter at least ${short[1]} characters`;
  const long = /^Too big: expected string to have <=(\d+) characters$/.exec(message);
  if (long) return `Use at most ${long[1]} characters`;
  const small = /^Too small: expected number to be >=?(-?[\d.]+)$/.exec(message);
  if (small) return `Enter ${small[1]} or more`;
  const big = /^Too big: expected number to be <=?(-?[\d.]+)$/.exec(message);
  if (big) return `Enter ${big[1]} or less`;
  const option = /^Invalid option: expected one of (.+)$/.exec(message);
  if (option) return `Choose one of ${option[1]!.replace(/"/g, '').split('|').join(', ')}`;
  if (/^Invalid input: expected number/.test(message)) return 'Enter a number';
  if (/^Invalid ISO datetime$/.test(message)) return 'Enter a date and time';
  return message;
}
