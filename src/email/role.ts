import { beforePlus } from './canonical.js';

/**
 * Mailboxes that belong to a function, not a person: RFC 2142's operational names plus the
 * no-reply and admin forms. Deliberately narrow: words such as "sales", "hello" or "team" are
 * often one real person's address at a small company, and flagging them costs real sign-ups.
 */
export const ROLE_MAILBOXES: ReadonlySet<string> = new Set([
  'abuse',
  'admin',
  'administrator',
  'do-not-reply',
  'donotreply',
  'do_not_reply',
  'ftp',
  'hostmaster',
  'info',
  'mailer-daemon',
  'news',
  'no-reply',
  'noc',
  'noreply',
  'no_reply',
  'postmaster',
  'root',
  'security',
  'support',
  'usenet',
  'uucp',
  'webmaster',
  'www',
]);

/** Whether the local part (case-insensitive, any `+tag` ignored) is a role mailbox. */
export function isRoleAccount(local: string): boolean {
  return ROLE_MAILBOXES.has(beforePlus(local.toLowerCase()));
}
