import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import QRCode from 'qrcode';

/**
 * TOTP (RFC 6238) over HOTP (RFC 4226): HMAC-SHA-1, 6 digits, 30-second steps, the parameters every
 * authenticator app defaults to. A code is accepted for its own step and one step either side
 * (RFC 6238 §5.2: clock drift and typing time), and only for a step later than the last one
 * accepted (the store keeps it), so a code cannot be used twice.
 */
export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of the current one that are accepted. */
const DRIFT_STEPS = 1;
/** 160 bits, RFC 4226 §4's recommended secret length. */
const SECRET_BYTES = 20;
const ISSUER = 'Risk console';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function fromBase32(text: string): Buffer {
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of text.replace(/=+$/, '').toUpperCase()) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error('not base32');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

export const newTotpSecret = () => base32(randomBytes(SECRET_BYTES));

/** The RFC 6238 time step of a time in milliseconds. */
export const stepAt = (ms: number) => Math.floor(ms / 1000 / TOTP_STEP_SECONDS);

/** RFC 4226 §5.3: the code of one counter value. */
export function hotp(secret: string, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', fromBase32(secret)).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** TOTP_DIGITS).padStart(TOTP_DIGITS, '0');
}

export const totpAt = (secret: string, ms: number) => hotp(secret, stepAt(ms));

/** The step a code matches, within the drift window around `now`, or undefined. Compared in constant time. */
export function matchingStep(secret: string, code: string, now: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const current = stepAt(now);
  let found: number | undefined;
  for (let step = current - DRIFT_STEPS; step <= current + DRIFT_STEPS; step++) {
    if (timingSafeEqual(Buffer.from(hotp(secret, step)), Buffer.from(code)) && found === undefined) found = step;
  }
  return found;
}

/** The `otpauth://` URI an authenticator app reads from the QR code (Google Authenticator's key URI format). */
export function otpauthUri(secret: string, email: string): string {
  const label = encodeURIComponent(`${ISSUER}:${email}`);
  return `otpauth://totp/${label}?secret=${secret}&issuer=${encodeURIComponent(ISSUER)}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_STEP_SECONDS}`;
}

/**
 * The QR code as an SVG `data:` URL, drawn here: the console's CSP (`img-src 'self' data:`) allows
 * it, and the secret never goes to a third-party QR service.
 */
export async function qrDataUrl(text: string): Promise<string> {
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

/** Ten recovery codes of 80 random bits each, `xxxx-xxxx-xxxx-xxxx` in base32 (lower case). */
export const RECOVERY_CODES = 10;
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => base32(randomBytes(10)).toLowerCase().match(/.{4}/g)!.join('-'));
}
/** What the store keeps of a recovery code: its SHA-256, dashes, spaces and case ignored. */
export const hashRecoveryCode = (code: string) => `sha256:${hash('sha256', code.replace(/[\s-]/g, '').toLowerCase(), 'hex')}`;
