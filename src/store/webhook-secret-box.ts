import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets at rest. A receiver checks an HMAC, so the service must have the secret
 * itself, not a hash of it (API keys are only compared, and so hashed). With WEBHOOK_SECRET_KEY set,
 * each secret is sealed with AES-256-GCM under a key derived from it (HKDF-SHA256), bound to its
 * endpoint's id (a sealed secret copied onto another endpoint does not open), and stored as
 * `sealed:v1:<iv>:<ciphertext+tag>`: a copy of the database alone, or a backup, does not give the
 * secrets away. Without the key (development) secrets are stored as they are (`whsec_…`), and the
 * service says so when it starts in production; secrets stored so are sealed at the next start
 * with a key. A sealed secret that cannot be opened (the key removed or changed) fails the
 * delivery with an error naming WEBHOOK_SECRET_KEY: retried on the back-off, never sent unsigned.
 */
const PREFIX = 'sealed:v1:';

export class SecretUnavailableError extends Error {
  override name = 'SecretUnavailableError';
}

export class SecretBox {
  private readonly key: Buffer | null;

  constructor(secretKey: string | undefined) {
    this.key = secretKey === undefined ? null : Buffer.from(hkdfSync('sha256', secretKey, 'risk-evaluation-webhooks', 'webhook signing secrets v1', 32));
  }

  get sealing(): boolean {
    return this.key !== null;
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }

  /** What to store for `secret` of endpoint `endpointId`. */
  seal(secret: string, endpointId: string): string {
    if (this.key === null) return secret;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(endpointId));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${iv.toString('base64')}:${sealed.toString('base64')}`;
  }

  /** The secret back from what is stored. */
  open(stored: string, endpointId: string): string {
    if (!SecretBox.isSealed(stored)) return stored;
    if (this.key === null) throw new SecretUnavailableError('signing secret sealed, and WEBHOOK_SECRET_KEY is not set');
    const [iv, sealed] = stored.slice(PREFIX.length).split(':').map((part) => Buffer.from(part, 'base64'));
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv!);
      decipher.setAAD(Buffer.from(endpointId));
      decipher.setAuthTag(sealed!.subarray(sealed!.length - 16));
      return Buffer.concat([decipher.update(sealed!.subarray(0, sealed!.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnavailableError('signing secret does not open under WEBHOOK_SECRET_KEY (changed since it was sealed?)');
    }
  }
}
