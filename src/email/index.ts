import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { EmailInspector } from '../evaluation/ports.js';
import { unknownEmail } from '../evaluation/unknown.js';

export interface EmailInspectorOptions {
  config: Config;
  logger: Logger;
}

/** Seam: until e-mail intelligence lands, every e-mail check is reported as unavailable, never as clean. */
export async function createEmailInspector(_options: EmailInspectorOptions): Promise<EmailInspector> {
  return {
    inspect: async (email) => unknownEmail(email, ['email.mx', 'email.disposable', 'email.free_provider', 'email.role_account', 'email.relay']),
    status: () => [],
    close: async () => {},
  };
}
