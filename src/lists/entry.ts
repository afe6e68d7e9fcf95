import { domainToASCII } from 'node:url';
import { parseEmail } from '../email/address.js';
import { DEVICE_DIGEST_LENGTH } from '../request/evaluation-request.js';
import { parseIp } from '../ip/address.js';
import { parseNetwork } from '../ip/numeric.js';
import type { ListKind } from './facts.js';

/**
 * A list entry's value as it is stored and matched: one spelling per value, so the same address
 * cannot be listed twice under two spellings, and a lookup is an exact comparison.
 */
export function normaliseListValue(kind: ListKind, raw: string): { value: string } | { error: string } {
  const text = raw.trim();
  switch (kind) {
    case 'email': {
      const parsed = parseEmail(text);
      if ('error' in parsed) return { error: `not an e-mail address: ${parsed.error}` };
      return { value: parsed.normalized.toLowerCase() };
    }
    case 'domain': {
      const domain = domainToASCII(text.replace(/^@/, '').replace(/\.$/, '').toLowerCase());
      if (domain === '' || !domain.includes('.') || !/^[a-z0-9.-]+$/.test(domain) || domain.length > 253) return { error: 'not a domain name (e.g. example.com)' };
      return { value: domain };
    }
    case 'ip': {
      const slash = text.indexOf('/');
      const address = parseIp(slash === -1 ? text : text.slice(0, slash));
      if ('error' in address || parseNetwork(text) === null) return { error: 'not an IP address or CIDR range (e.g. 203.0.113.7 or 203.0.113.0/24)' };
      if (slash === -1) return { value: address.address };
      const bits = Number(text.slice(slash + 1));
      // An IPv4-mapped range (::ffff:203.0.113.0/120) is its IPv4 range, as an IPv4-mapped address is its IPv4 address.
      if (address.version === 4 && text.includes(':')) return bits < 96 ? { error: 'an IPv4-mapped range must be /96 or longer' } : { value: `${address.address}/${bits - 96}` };
      return { value: `${address.address}/${bits}` };
    }
    case 'device':
      return new RegExp(`^[0-9a-f]{${DEVICE_DIGEST_LENGTH}}$`).test(text.toLowerCase())
        ? { value: text.toLowerCase() }
        : { error: `not a device hash (${DEVICE_DIGEST_LENGTH} hexadecimal characters, as device_intelligence.device_hash)` };
    case 'user':
      return text.length >= 1 && text.length <= 256 ? { value: raw } : { error: 'a user id is 1 to 256 characters' };
  }
}
