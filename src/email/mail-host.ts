import { NULL_MX } from '../dns/records.js';

/**
 * Whether an MX exchange names a mail server that other servers could deliver to. RFC 5321 §5.1:
 * "If MX records are present, but none of them are usable … this situation MUST be reported as an
 * error": such a domain is undeliverable, a definite answer, not `unknown` (nothing failed: DNS
 * answered, and the answer names no one reachable). Postfix, Exim and Sendmail bounce it too
 * ("mail for … loops back to myself", or no host to try). Not usable:
 *
 * - the null MX "." (RFC 7505);
 * - an IP address written as a name (`127.0.0.1`, `0.0.0.0`, `[192.0.2.1]`, `::1`): MX data is a
 *   domain name (RFC 1035 §3.3.9), and a name whose last label is all digits cannot exist, since
 *   no top-level domain is numeric (RFC 1123 §2.1, RFC 3696 §2);
 * - `localhost` and names under it, which every sender must resolve to itself, and names under
 *   `invalid`, which never exist (RFC 6761 §6.3, §6.4: the special-use names resolvers are told to
 *   treat as special; `test` and `example` are not, §6.2, §6.5); names under `local`, which are
 *   multicast DNS on the sender's own link (RFC 6762 §3);
 * - a name that is not a host name: labels of letters, digits, hyphens (RFC 1123 §2.1; the
 *   underscore is let through, as mail software does), at most 253 characters.
 *
 * A name that only resolves to a loopback or private address (`mx.example A 127.0.0.1`) is not
 * caught here: that would take a look-up per mail host.
 */
export function isUsableMailHost(exchange: string): boolean {
  if (exchange === NULL_MX || exchange.length > 253 || !HOST_NAME.test(exchange)) return false;
  const last = exchange.slice(exchange.lastIndexOf('.') + 1);
  return !NUMERIC.test(last) && !LOCAL_ONLY.has(last);
}

/** Lower-case labels of 1–63 letters, digits, hyphens or underscores, dot-separated. */
const HOST_NAME = /^[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*$/;
const NUMERIC = /^[0-9]+$/;
const LOCAL_ONLY = new Set(['localhost', 'invalid', 'local']);
