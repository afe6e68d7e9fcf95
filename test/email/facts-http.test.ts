import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundledLists } from '../../src/email/bundled.js';
import { evaluationBody, startTestApp, type TestApp } from '../support/app.js';
import { expectEvaluation } from '../support/contract.js';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { postEvaluate } from '../support/fuzz.js';

/**
 * Regressions of issue 11, through the real app with a real DNS server on 127.0.0.1 answering an MX
 * for every domain below (so `disposable` is the lists' and the MX check's answer, never unknown):
 * - finding 12: free-provider and typo facts were wrong on real domains;
 * - finding 13: a customer domain under a public suffix on a vendor list (`ddns.net`) was disposable;
 * - finding 14: throw-away domains that two broad lists agree on were missed.
 */
const DOMAINS = [
  'ymail.com', 'mail.com', 'tutanota.com', 'tuta.io', 'gmx.ch', 'sohu.com', 'fastmail.com', 'gmail.com',
  'example.com', 'facebook.com', 'bt.com', 'ox.ac.uk', 'mit.edu', 'gmial.com',
  'myhome.ddns.net', 'shop.dynu.net', 'x.cloudns.asia', 'toko.my.id', 'mailinator.com',
  '10minutemail.info', '10minutesmail.net', 'adresseemailtemporaire.com', '30minutenmail.eu',
];
const zone: Zone = Object.fromEntries(DOMAINS.map((d) => [d, { MX: [{ exchange: `mx.${d}`, priority: 10 }] }]));

let dns: TestDnsServer;
let dataDir: string;
let t: TestApp;
beforeAll(async () => {
  dns = await startDnsServer({ zone });
  dataDir = await mkdtemp(join(tmpdir(), 'email-facts-'));
  // The operator's word still beats every list, the newly agreed ones included.
  await writeFile(join(dataDir, 'disposable-allowlist.txt'), '30minutenmail.eu\n');
  t = await startTestApp({ DATA_DIR: dataDir, DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '2000' });
});
afterAll(async () => {
  await t.app.close();
  await dns.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function emailFacts(address: string) {
  const body = expectEvaluation(await postEvaluate(t, evaluationBody({ email: address })));
  expect(body.unavailable).not.toContain('email.mx');
  return body.email;
}

describe('free provider and typo facts (finding 12)', () => {
  it.each(['ymail.com', 'mail.com', 'tutanota.com', 'tuta.io', 'gmx.ch', 'sohu.com', 'fastmail.com', 'gmail.com'])(
    '%s is a free provider, never corrected',
    async (domain) => {
      expect(await emailFacts(`jane@${domain}`)).toMatchObject({ free_provider: true, suggested_domain: null, disposable: false });
    },
  );

  it.each(['example.com', 'facebook.com', 'bt.com', 'ox.ac.uk', 'mit.edu'])('%s is not a free provider, and not corrected', async (domain) => {
    expect(await emailFacts(`jane@${domain}`)).toMatchObject({ free_provider: false, suggested_domain: null });
  });

  it('still corrects a typo of a major provider', async () => {
    expect(await emailFacts('jane@gmial.com')).toMatchObject({ free_provider: false, suggested_domain: 'gmail.com' });
  });
});

describe('parent matching stops at the public suffix (finding 13)', () => {
  it.each(['myhome.ddns.net', 'shop.dynu.net', 'x.cloudns.asia', 'toko.my.id'])('a customer domain %s is not disposable', async (domain) => {
    expect(await emailFacts(`jane@${domain}`)).toMatchObject({ disposable: false });
  });

  it('a listed throw-away domain still is', async () => {
    expect(await emailFacts('jane@mailinator.com')).toMatchObject({ disposable: true, free_provider: false });
  });
});

describe('coverage of the broad lists where they agree (finding 14)', () => {
  it.each(['10minutemail.info', '10minutesmail.net', 'adresseemailtemporaire.com'])('%s, missed before, is disposable', async (domain) => {
    // On at least two of the broad lists (mailchecker, burner-email-providers…), on none of those that count alone.
    expect(loadBundledLists().agreedDisposable).toContain(domain);
    expect(await emailFacts(`jane@${domain}`)).toMatchObject({ disposable: true });
  });

  it('the allowlist still wins over them', async () => {
    expect(loadBundledLists().agreedDisposable).toContain('30minutenmail.eu');
    expect(await emailFacts('jane@30minutenmail.eu')).toMatchObject({ disposable: false });
  });
});
