import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { MAX_RECORDS_PER_ANSWER } from '../../src/dns/records.js';
import { createResolver } from '../../src/dns/resolver.js';
import { createEmailInspector, type EmailIntelligence } from '../../src/email/index.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';

/**
 * What a domain's owner can put in its DNS answers, through the HTTP API of the real app with a
 * real DNS server on 127.0.0.1: answers too large to keep, and mail hosts that hide where mail
 * goes or name no one.
 */

const DISPOSABLE_MX = 'mail.mailinator.com';
/** Small enough that a few dozen huge answers must push each other out. */
const CACHE_BYTES = 60_000;

let dns: TestDnsServer;
let email: EmailIntelligence;
let t: TestApp;

beforeAll(async () => {
  dns = await startDnsServer({
    zone: {
      '*.hostile.example': { hugeMx: true },
      'loopback-ip.example': { MX: [{ exchange: '127.0.0.1', priority: 10 }] },
      'localhost.example': { MX: [{ exchange: 'localhost', priority: 10 }] },
      'unspecified.example': { MX: [{ exchange: '0.0.0.0', priority: 10 }] },
      'ipv6-literal.example': { MX: [{ exchange: '::1', priority: 10 }] },
      'address-literal.example': { MX: [{ exchange: '[192.0.2.1]', priority: 10 }] },
      'invalid.example': { MX: [{ exchange: 'mx.nowhere.invalid', priority: 10 }, { exchange: 'mx.localhost', priority: 20 }] },
      'loopback-then-real.example': { MX: [{ exchange: 'localhost', priority: 5 }, { exchange: 'mx.real.example', priority: 10 }] },
      'dummy-backup.example': { MX: [{ exchange: DISPOSABLE_MX, priority: 10 }, { exchange: 'backup.dummy-backup.example', priority: 20 }] },
      'dummy-primary.example': { MX: [{ exchange: 'mx.dummy-primary.example', priority: 5 }, { exchange: DISPOSABLE_MX, priority: 10 }] },
      'dummy-equal.example': { MX: [{ exchange: 'mx.dummy-equal.example', priority: 10 }, { exchange: DISPOSABLE_MX, priority: 10 }] },
      'own-mail.example': { MX: [{ exchange: 'mx1.own-mail.example', priority: 10 }, { exchange: 'mx2.own-mail.example', priority: 20 }] },
    },
  });
  const config = loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'risk-data-')), DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '2000' });
  const resolver = createResolver({ servers: config.dnsServers, timeoutMs: config.dnsTimeoutMs, cacheBytes: CACHE_BYTES });
  email = await createEmailInspector({ config, logger: pino({ level: 'silent' }), resolver });
  t = await startTestApp({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '2000' }, { email });
});

afterAll(async () => {
  await t.app.close();
  await dns.close();
});

interface EmailFacts {
  deliverability: string;
  deliverable: boolean | null;
  mx_records: Array<{ exchange: string; priority: number }> | null;
  disposable: boolean | null;
}

async function evaluate(address: string): Promise<{ email: EmailFacts; unavailable: string[]; signals: string[]; bytes: number }> {
  const response = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ email: address }) });
  expect(response.statusCode).toBe(200);
  return { ...(response.json() as { email: EmailFacts; unavailable: string[]; signals: string[] }), bytes: response.body.length };
}

describe('an MX answer too large to keep', () => {
  it('regression: is cut to the most preferred records, and fresh huge answers cannot grow the cache past its byte bound', async () => {
    // A domain answering with ~3,000 MX records of ~245-character names (64 KB over TCP), over
    // thousands of fresh domains, grew the process to 4.3 GB; every record was also copied into
    // each response.
    for (let i = 0; i < 30; i += 1) {
      const { email: facts, bytes } = await evaluate(`jane@d${i}.hostile.example`);
      expect(facts.deliverability).toBe('deliverable');
      expect(facts.mx_records).toHaveLength(MAX_RECORDS_PER_ANSWER);
      const priorities = facts.mx_records!.map((r) => r.priority);
      expect(priorities).toEqual([...priorities].sort((a, b) => a - b));
      expect(bytes).toBeLessThan(8_000);
      expect(email.resolver.cacheBytes).toBeLessThanOrEqual(CACHE_BYTES);
    }
    expect(email.resolver.cacheSize).toBeLessThan(30);
  });
});

describe('mail hosts no one can reach (RFC 5321 §5.1, RFC 6761)', () => {
  it.each([
    ['a loopback address', 'loopback-ip.example'],
    ['localhost', 'localhost.example'],
    ['the unspecified address', 'unspecified.example'],
    ['an IPv6 address', 'ipv6-literal.example'],
    ['an address literal', 'address-literal.example'],
    ['names under invalid and localhost', 'invalid.example'],
  ])('regression: an MX naming %s is undeliverable, a definite answer, and the rule fires', async (_label, domain) => {
    const { email: facts, unavailable, signals } = await evaluate(`jane@${domain}`);
    expect(facts).toMatchObject({ deliverability: 'undeliverable', deliverable: false, disposable: false });
    expect(facts.mx_records!.length).toBeGreaterThan(0); // what the domain published, to show why
    expect(unavailable).not.toContain('email.mx');
    expect(signals).toContain('email_undeliverable');
  });

  it('a reachable host beside one that is not still takes the mail', async () => {
    const { email: facts } = await evaluate('jane@loopback-then-real.example');
    expect(facts).toMatchObject({ deliverability: 'deliverable', mx_records: [{ exchange: 'mx.real.example', priority: 10 }] });
  });
});

describe('disposable by MX', () => {
  it.each([
    ['a dummy backup', 'dummy-backup.example'],
    ['a dummy primary', 'dummy-primary.example'],
    ['a dummy of equal preference', 'dummy-equal.example'],
  ])('regression: %s beside a throw-away service’s mail host does not hide it', async (_label, domain) => {
    const { email: facts, signals } = await evaluate(`jane@${domain}`);
    expect(facts).toMatchObject({ deliverability: 'deliverable', disposable: true });
    expect(signals).toContain('email_disposable');
  });

  it('a domain with its own mail hosts is not disposable', async () => {
    expect((await evaluate('jane@own-mail.example')).email).toMatchObject({ deliverability: 'deliverable', disposable: false });
  });
});
