/**
 * Real providers that vendor disposable lists carry by mistake, found by checking the lists against
 * the top mail domains (test/email/fixtures/top-mail-domains.txt). Left out of every bundled
 * disposable list; a domain added here needs a reason a reviewer can check. The operator's own
 * `DATA_DIR/disposable-allowlist.txt` is the place for local exceptions.
 */
export const NOT_DISPOSABLE: readonly string[] = [
  '21cn.com', // China Telecom's portal mail
  '139.com', // China Mobile's mail
  '189.cn', // China Telecom's mail
  'aver.com', // AVerMedia, a hardware maker
  'consultant.com', // a mail.com domain
  'keemail.me', // a Tuta domain
  'myself.com', // a mail.com domain
  'sdf.org', // SDF Public Access UNIX System: long-lived member accounts
  'sohu.com', // Sohu Mail
  'tom.com', // TOM Mail
  'yahoo.com.ar', // Yahoo Argentina
  'yeah.net', // NetEase
];
