import { createHmac, timingSafeEqual } from 'node:crypto';
import { SECRET_PREFIX } from '../store/webhook-endpoints.js';

/**
 * Webhook signatures after the Standard Webhooks convention
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
 * the signed content is `${webhook-id}.${webhook-timestamp}.${body}`, signed with HMAC-SHA256 under
 * the secret's bytes (the base64 after `whsec_`), sent as `v1,<base64>`; several signatures (a
 * secret being rotated, both valid) are separated by spaces, and a receiver accepts any one.
 */

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a signing secret starts with whsec_');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The three headers of a delivery, signed with every secret that is valid now (one, or two while rotating). */
export function webhookHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => sign(secret, id, timestamp, body)).join(' '),
  };
}

/**
 * What a receiver does (examples/ shows it in Node and Python): any signature valid under the
 * secret, and a timestamp within `toleranceSeconds` of now (a replayed old delivery is refused).
 */
export function verify(secret: string, headers: Record<string, string | undefined>, body: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const id = headers['webhook-id'];
  const timestamp = Number(headers['webhook-timestamp']);
  const signatures = headers['webhook-signature'];
  if (id === undefined || signatures === undefined || !Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(secret, id, timestamp, body));
  return signatures.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
