import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { EmailInspector } from '../evaluation/ports.js';

export interface EmailInspectorOptions {
  config: Config;
  logger: Logger;
}

/**
 * Seam: until e-mail intelligence lands, every e-mail check is reported as unavailable,
 * never as clean.
 */
export async function createEmailInspector(_options: EmailInspectorOptions): Promise<EmailInspector> {
  return {
    async inspect(email) {
      return {
        facts: {
          address: email.address,
          normalized: email.normalized,
          domain: email.domain,
          canonical: email.normalized,
          deliverable: null,
          deliverability: 'unknown',
          mx_records: null,
          disposable: null,
          free_provider: null,
          role_account: null,
          relay: null,
          suggested_domain: null,
        },
        unavailable: ['email.mx', 'email.disposable', 'email.free_provider', 'email.role_account', 'email.relay'],
      };
    },
    status: () => [],
    close: async () => {},
  };
}
