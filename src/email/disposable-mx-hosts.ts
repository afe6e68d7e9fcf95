/**
 * Mail-host domains run by disposable-mail services. A domain whose every MX host is one of these
 * (or under one) receives its mail at a throwaway inbox, whatever its name: this catches the fresh
 * domains such services rotate through before any list has them. Each entry is itself on the
 * bundled disposable lists (a test keeps it that way); `DATA_DIR/disposable-mx-hosts.txt` adds more.
 */
export const DISPOSABLE_MX_HOSTS: readonly string[] = [
  '10minutemail.com',
  '1secmail.com',
  'discard.email',
  'dropmail.me',
  'emailfake.com',
  'emailondeck.com',
  'fakeinbox.com',
  'generator.email',
  'getnada.com',
  'guerrillamail.com',
  'guerrillamail.net',
  'harakirimail.com',
  'inboxkitten.com',
  'mail.gw',
  'mail.tm',
  'mailcatch.com',
  'maildrop.cc',
  'mailinator.com',
  'mailnesia.com',
  'mailpoof.com',
  'mintemail.com',
  'moakt.com',
  'mohmal.com',
  'mytemp.email',
  'sharklasers.com',
  'spamgourmet.com',
  'tempail.com',
  'temp-mail.org',
  'tempmail.plus',
  'tempmailo.com',
  'tempr.email',
  'throwawaymail.com',
  'trashmail.com',
  'yopmail.com',
];
