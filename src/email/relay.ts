/**
 * Forwarding-alias services: each address leads to a real person's mailbox, so they are
 * `relay: true` and never disposable, even where a vendor disposable list includes them (the most
 * common complaint about those lists). Entries also cover subdomains (addy.io's
 * `alias@user.anonaddy.com`, 33mail's `alias@user.33mail.com`). Apple's Hide My Email addresses
 * inside icloud.com cannot be told from ordinary iCloud addresses and are not flagged.
 */
export const RELAY_DOMAINS: readonly string[] = [
  // SimpleLogin (Proton)
  'simplelogin.com',
  'simplelogin.co',
  'simplelogin.fr',
  'aleeas.com',
  'slmail.me',
  'silomails.com',
  'slmails.com',
  '8alias.com',
  '8shield.net',
  'dralias.com',
  // Proton Pass aliases
  'passinbox.com',
  'passmail.net',
  'passmail.com',
  'passfwd.com',
  // Firefox Relay
  'mozmail.com',
  'relay.firefox.com',
  // DuckDuckGo Email Protection
  'duck.com',
  // Sign in with Apple private relay
  'privaterelay.appleid.com',
  // addy.io (formerly AnonAddy)
  'addy.io',
  'anonaddy.com',
  'anonaddy.me',
  // 33mail
  '33mail.com',
];
