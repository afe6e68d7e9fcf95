import { MAJOR_PROVIDERS } from './typo.js';

/**
 * The mail-host domains of the big mailbox providers, mail gateways and shared hosts: the MX hosts
 * of gmail.com, outlook.com, yahoo.com and of the millions of company domains they, the gateways
 * and the hosting companies (OVHcloud, Namecheap, GoDaddy, IONOS, Hostinger…) serve. None
 * may ever be a disposable service's mail host: an entry here (or under or above one) on a
 * temp-mail MX host list would call every one of those domains throw-away, so a fetched list that
 * names one is refused whole (data-update), and an operator's file leaves it out (sources.ts).
 * Hand-kept from the providers' published MX records and setup guides (2026-11); an entry covers
 * its subdomains.
 */
export const MAJOR_MAIL_HOSTS: readonly string[] = [
  // The mainstream mailbox domains the typo check knows (typo.ts), then their and others' mail hosts.
  ...MAJOR_PROVIDERS,
  // Google (gmail.com, Workspace: aspmx.l.google.com, smtp.google.com)
  'google.com', 'googlemail.com', 'gmail.com',
  // Microsoft (outlook.com, hotmail.com, Microsoft 365: *.mail.protection.outlook.com)
  'outlook.com', 'hotmail.com', 'live.com', 'msn.com', 'office365.com', 'microsoft.com',
  // Yahoo and AOL (mta*.am0.yahoodns.net)
  'yahoo.com', 'yahoodns.net', 'aol.com', 'yahoo.co.jp',
  // Apple (mx01.mail.icloud.com)
  'icloud.com', 'me.com', 'apple.com',
  // Proton, Tuta, Fastmail (in*-smtp.messagingengine.com), Zoho (mx.zoho.com and its regional data centres)
  'protonmail.ch', 'proton.me', 'protonmail.com', 'tutanota.de', 'tuta.io', 'messagingengine.com', 'fastmail.com',
  'zoho.com', 'zoho.eu', 'zoho.in', 'zoho.com.au', 'zoho.jp', 'zohomail.com',
  // GMX, WEB.DE, mail.com, IONOS, T-Online, Orange, Free, La Poste, Libero
  'gmx.net', 'gmx.de', 'web.de', 'mail.com', 'kundenserver.de', 'ionos.com', '1and1.com', 't-online.de', 'orange.fr', 'free.fr', 'laposte.net', 'libero.it',
  // Yandex, Mail.ru, Rambler
  'yandex.ru', 'yandex.net', 'mail.ru', 'rambler.ru',
  // NetEase, Tencent, Naver, Kakao
  '163.com', '126.com', 'netease.com', 'qq.com', 'naver.com', 'daum.net', 'kakao.com',
  // Large ISPs' customer mail
  'comcast.net', 'att.net', 'verizon.net', 'cox.net', 'charter.net', 'btinternet.com', 'sky.com',
  // Mail gateways and hosting in front of company domains: Proofpoint, Mimecast, Barracuda, Broadcom,
  // GoDaddy (mailstore1.secureserver.net), AWS, Mailgun, SendGrid, Cloudflare Email Routing
  'pphosted.com', 'mimecast.com', 'barracudanetworks.com', 'messagelabs.com', 'secureserver.net', 'amazonaws.com', 'amazonses.com', 'mailgun.org', 'sendgrid.net', 'cloudflare.net',
  // Shared web hosts' and mail hosts' MX, each serving hundreds of thousands of customer domains:
  // OVHcloud (mx1.mail.ovh.net), Namecheap (eforward1.registrar-servers.com, mx1.privateemail.com),
  // Rackspace (mx1.emailsrvr.com), Titan (mx1.titan.email), Hostinger (mx1.hostinger.com), one.com,
  // Gandi (spool.mail.gandi.net), MXroute, Migadu (aspmx1.migadu.com), and the forwarding services
  // ImprovMX (mx1.improvmx.com) and Forward Email (mx1.forwardemail.net)
  'ovh.net', 'registrar-servers.com', 'privateemail.com', 'emailsrvr.com', 'titan.email', 'hostinger.com', 'one.com',
  'gandi.net', 'mxrouting.net', 'migadu.com', 'improvmx.com', 'forwardemail.net',
];

/** The entry of MAJOR_MAIL_HOSTS that `host` is, lies under, or lies above; `null` when none. */
export function majorMailHostOf(host: string): string | null {
  for (const major of MAJOR_MAIL_HOSTS) {
    if (host === major || host.endsWith(`.${major}`) || major.endsWith(`.${host}`)) return major;
  }
  return null;
}
