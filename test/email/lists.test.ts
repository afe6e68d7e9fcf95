import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundledLists } from '../../src/email/bundled.js';
import { DISPOSABLE_MX_HOSTS } from '../../src/email/disposable-mx-hosts.js';
import { majorMailHostOf } from '../../src/email/major-mail-hosts.js';
import { isDisposable, isListedDisposable } from '../../src/email/disposable.js';
import { DomainList } from '../../src/email/domain-list.js';
import { FREE_PROVIDER_ADDITIONS, isInstitutional, NOT_FREE_PROVIDERS, REAL_NEAR_MAJOR } from '../../src/email/free-providers.js';
import { parseDomainList } from '../../src/email/list-file.js';
import { NOT_DISPOSABLE } from '../../src/email/not-disposable.js';
import { isPublicSuffix } from '../../src/email/public-suffix.js';
import { RELAY_DOMAINS } from '../../src/email/relay.js';
import { openEmailSources, type EmailData, type EmailSources } from '../../src/email/sources.js';
import { MAJOR_PROVIDERS, suggestDomain } from '../../src/email/typo.js';
import { TOP_MAIL_DOMAINS } from './fixtures/top-mail-domains.js';

describe('DomainList', () => {
  const list = DomainList.of(['mailinator.com', 'example.co.uk', 'amazonaws.com', 'tk.example.net']);

  it('matches a domain and its subdomains', () => {
    expect(list.match('mailinator.com')).toBe('mailinator.com');
    expect(list.match('a.b.mailinator.com')).toBe('mailinator.com');
    expect(list.match('a.b.example.co.uk')).toBe('example.co.uk');
    expect(list.match('x.tk.example.net')).toBe('tk.example.net');
    expect(list.match('notmailinator.com')).toBeNull();
    expect(list.match('example.net')).toBeNull();
  });

  it('never matches at or across a public suffix, private section included', () => {
    // s3.amazonaws.com is a public suffix (PSL private section): the customer's bucket is not Amazon.
    expect(list.match('bucket.s3.amazonaws.com')).toBeNull();
    expect(DomainList.of(['co.uk']).match('example.co.uk')).toBeNull();
    expect(DomainList.of(['ddns.net']).match('myhome.ddns.net')).toBeNull();
    expect(DomainList.of(['ddns.net']).match('ddns.net')).toBeNull();
    expect(DomainList.of(['my.id']).match('toko.my.id')).toBeNull();
    // An entry under the suffix still covers its own subdomains.
    expect(DomainList.of(['spam.ddns.net']).match('a.spam.ddns.net')).toBe('spam.ddns.net');
  });

  it('holds each domain once, and finds every one of many', () => {
    const domains = Array.from({ length: 20_000 }, (_, i) => `d${i}.example`);
    const big = DomainList.of(domains, domains.slice(0, 100));
    expect(big.size).toBe(20_000);
    expect(domains.every((d) => big.has(d) && big.match(`x.${d}`) === d)).toBe(true);
    expect(big.has('d20000.example')).toBe(false);
    expect(big.has('0.example')).toBe(false);
    expect(big.match('d1.example.net')).toBeNull();
    expect(new Set(big)).toEqual(new Set(domains));
  });
});

describe('parseDomainList', () => {
  const parsed = (text: string) => {
    const result = parseDomainList(text, 'x.txt');
    return 'error' in result ? result : { domains: [...result.list].sort(), publicSuffixes: result.publicSuffixes };
  };

  it('reads domains, skipping comments and blank lines', () => {
    expect(parsed('# mine\nFoo.example\n\n*.bar.example  # wildcard\n@baz.example\nbücher.example\r\n')).toEqual({
      domains: ['bar.example', 'baz.example', 'foo.example', 'xn--bcher-kva.example'],
      publicSuffixes: [],
    });
  });

  it('leaves out public suffixes and says which', () => {
    expect(parsed('mine.example\nddns.net\ncloudns.asia\nco.uk\n')).toEqual({
      domains: ['mine.example'],
      publicSuffixes: ['ddns.net', 'cloudns.asia', 'co.uk'],
    });
  });

  it('refuses the whole file on one bad line, naming the file and line', () => {
    expect(parseDomainList('ok.example\nnot a domain\n', '/data/disposable-domains.txt')).toEqual({
      error: '/data/disposable-domains.txt:2: "not a domain" is not a domain',
    });
  });
});

describe('bundled data', () => {
  const bundled = loadBundledLists();
  let dataDir: string;
  let sources: EmailSources;
  let data: EmailData;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'email-lists-'));
    sources = await openEmailSources({ dataDir, reloadIntervalMs: 60_000, logger: pino({ level: 'silent' }) });
    data = sources.current();
  });
  afterAll(async () => {
    sources.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const disposable = (domain: string) => isListedDisposable(domain, data.disposable);

  it('loads every vendor list with its version', () => {
    for (const list of [...bundled.disposable, ...bundled.corroborating, bundled.freeProviders]) {
      expect(list.source).toMatch(/@\d+\.\d+\.\d+\//);
      expect(list.entries).toBeGreaterThan(4_000);
    }
    // The corroborating lists' own domains are let go once the agreed ones are known.
    expect(bundled.corroborating.every((l) => l.domains.length === 0)).toBe(true);
    expect(bundled.agreedDisposable.length).toBeGreaterThan(1_000);
  });

  it('ignores the public suffixes the vendor lists carry, so no customer domain under one is disposable', () => {
    const suffixes = [...new Set([...bundled.disposable.flatMap((l) => l.domains), ...bundled.agreedDisposable].filter(isPublicSuffix))];
    expect(suffixes).toEqual(expect.arrayContaining(['ddns.net', 'dynu.net', 'cloudns.asia', 'my.id', 'hopto.org', 'edu.pl']));
    expect(suffixes.filter((s) => disposable(s) || disposable(`customer.${s}`))).toEqual([]);
    for (const customer of ['myhome.ddns.net', 'shop.dynu.net', 'x.cloudns.asia', 'toko.my.id', 'cam.hopto.org', 'uw.edu.pl']) {
      expect(disposable(customer), customer).toBe(false);
    }
  });

  it('still flags a throw-away domain, its subdomains, and what two broad lists agree on', () => {
    expect(disposable('mailinator.com')).toBe(true);
    expect(disposable('x.mailinator.com')).toBe(true);
    const agreed = bundled.agreedDisposable.filter((d) => !RELAY_DOMAINS.includes(d)).slice(0, 50);
    expect(agreed.filter((d) => !disposable(d))).toEqual([]);
  });

  it('never calls a top legitimate mail domain disposable', () => {
    expect(TOP_MAIL_DOMAINS.all.filter(disposable)).toEqual([]);
  });

  it('calls the top consumer mail domains free providers, and never corrects them', () => {
    expect(TOP_MAIL_DOMAINS.consumer.filter((d) => !data.freeProviders.has(d))).toEqual([]);
    expect(TOP_MAIL_DOMAINS.consumer.filter((d) => suggestDomain(d, data.freeProviders) !== null)).toEqual([]);
  });

  it('calls no company, university or public body a free provider, and never corrects one', () => {
    expect(TOP_MAIL_DOMAINS.business.filter((d) => data.freeProviders.has(d))).toEqual([]);
    expect(TOP_MAIL_DOMAINS.business.filter((d) => suggestDomain(d, data.freeProviders) !== null)).toEqual([]);
    for (const reserved of ['example.com', 'example.org', 'mail.example', 'test.com']) expect(data.freeProviders.has(reserved), reserved).toBe(false);
  });

  it('calls regional free providers free (recovered from freemail), yet no organisation or placeholder', () => {
    for (const free of ['yahoo.nl', 'lenta.ru', 'live.com.my', 'aport.ru', 'onet.eu', 'rambler.ru', 'fastmail.net']) expect(data.freeProviders.has(free), free).toBe(true);
    // On a vendor list, corrected: companies, a placeholder, a university, a suffix no registry has.
    for (const notFree of ['example.com', 'facebook.com', 'bt.com', 'nus.edu.sg', 'comcast.com', 'check.com12', 'email.tst']) {
      expect(data.freeProviders.has(notFree), notFree).toBe(false);
    }
  });

  it('trusts a broad list only where another agrees: real providers one of them carries stay clean', () => {
    // zoho.com, hushmail.com and email.com are on @dahoom/disposable-email alone.
    for (const real of ['zoho.com', 'hushmail.com', 'email.com']) expect(disposable(real), real).toBe(false);
    expect(bundled.corroborating.map((l) => l.name)).toEqual(['email.disposable.mailchecker', 'email.disposable.burner', 'email.disposable.disposable_github', 'email.disposable.freemail']);
  });

  it('drops typo domains the vendor free list carries, so they are still suggested', () => {
    for (const [typo, meant] of [['gmial.com', 'gmail.com'], ['hotmial.com', 'hotmail.com'], ['yaho.com', 'yahoo.com']] as const) {
      expect(data.freeProviders.has(typo), typo).toBe(false);
      expect(suggestDomain(typo, data.freeProviders)).toBe(meant);
    }
  });

  it('keeps the curated lists consistent with each other and the data', () => {
    const vendorFree = new Set(bundled.freeProviders.domains);
    expect(NOT_FREE_PROVIDERS.filter((d) => vendorFree.has(d))).toEqual([]);
    expect([...FREE_PROVIDER_ADDITIONS, ...REAL_NEAR_MAJOR].filter((d) => !data.freeProviders.has(d))).toEqual([]);
    expect(NOT_DISPOSABLE.filter(disposable)).toEqual([]);
    expect(isInstitutional('ox.ac.uk') && isInstitutional('mit.edu') && isInstitutional('nus.edu.sg') && isInstitutional('hmrc.gov.uk')).toBe(true);
    expect(isInstitutional('uae.ac') || isInstitutional('gmail.com') || isInstitutional('yahoo.co.uk')).toBe(false);
  });

  it('keeps every curated disposable mail host on the vendor lists', () => {
    expect(DISPOSABLE_MX_HOSTS.filter((h) => data.disposable.listed.match(h) === null)).toEqual([]);
  });

  it('never takes a legitimate mail domain, a major provider or a relay for a throw-away mail host', () => {
    const hosts = DomainList.of(DISPOSABLE_MX_HOSTS);
    const legit = [...TOP_MAIL_DOMAINS.all, ...MAJOR_PROVIDERS, ...RELAY_DOMAINS];
    expect(legit.filter((d) => hosts.match(d) !== null || hosts.match(`mx1.${d}`) !== null)).toEqual([]);
    expect(new Set(DISPOSABLE_MX_HOSTS).size).toBe(DISPOSABLE_MX_HOSTS.length);
    expect(DISPOSABLE_MX_HOSTS.filter((h) => majorMailHostOf(h) !== null)).toEqual([]);
    expect(legit.filter((d) => majorMailHostOf(d) === null && MAJOR_PROVIDERS.includes(d))).toEqual([]);
    // The MX hosts of shared hosting and mail services, each in front of many customers' domains.
    const shared = [
      'mx1.mail.ovh.net', 'eforward1.registrar-servers.com', 'mx1.privateemail.com', 'mx1.emailsrvr.com', 'mx1.titan.email',
      'mx.zoho.in', 'mx.zoho.eu', 'mx.zohomail.com', 'mailstore1.secureserver.net', 'mxa.mailgun.org', 'mx.sendgrid.net',
      'inbound-smtp.us-east-1.amazonaws.com', 'feedback-smtp.us-east-1.amazonses.com', 'in1-smtp.messagingengine.com',
      'eu-smtp-inbound-1.mimecast.com', 'mx0a-001.pphosted.com', 'd123.ess.barracudanetworks.com',
      'example-com.mail.protection.outlook.com', 'mx1.hostinger.com', 'mx00.ionos.com', 'mx00.1and1.com', 'mx00.kundenserver.de',
      'mx1.pub.mailpod1-cph3.one.com', 'spool.mail.gandi.net', 'heracles.mxrouting.net', 'aspmx1.migadu.com', 'mx1.improvmx.com',
      'mx1.forwardemail.net', 'mx.yandex.net', 'mxs.mail.ru', 'mx1.qq.com', '163mx00.mxmail.netease.com', 'mx1.naver.com',
    ];
    expect(shared.filter((h) => majorMailHostOf(h) === null)).toEqual([]);
    // A fresh domain whose mail goes to one is disposable; one on Google's or Microsoft's is not.
    const mx = (exchange: string) => [{ exchange, priority: 10 }];
    expect(isDisposable('fresh-brand-4821.com', mx('mx.kuku.lu'), data.disposable)).toBe(true);
    expect(isDisposable('fresh-brand-4821.com', mx('aspmx.l.google.com'), data.disposable)).toBe(false);
    expect(isDisposable('fresh-brand-4821.com', mx('fresh-brand-4821-com.mail.protection.outlook.com'), data.disposable)).toBe(false);
  });

  it('never lets a vendor list flag a major provider', () => {
    expect(MAJOR_PROVIDERS.filter((p) => data.disposable.listed.match(p) !== null)).toEqual([]);
  });

  it('knows vendor lists include relays, which is why relays are checked first', () => {
    expect(RELAY_DOMAINS.filter((r) => data.disposable.listed.match(r) !== null).length).toBeGreaterThan(0);
    expect(RELAY_DOMAINS.filter(disposable)).toEqual([]);
  });
});
