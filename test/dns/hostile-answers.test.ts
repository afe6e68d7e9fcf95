import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { MAX_RECORDS_PER_ANSWER } from '../../src/dns/records.js';
import { createResolver } from '../../src/dns/resolver.js';
import { createEmailInspector, type EmailIntelligence } from '../../src/email/index.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';

/**
 * What a domain's owner can put in its DNS answers, through the HTTP API of the real app with a
 * real DNS server on 127.0.0.1: answers too large to keep.
 */

/** Small enough that a few dozen huge answers must push each other out. */
const CACHE_BYTES = 60_000;

let dns: TestDnsServer;
let email: EmailIntelligence;
let t: TestApp;

beforeAll(async () => {
  dns = await startDnsServer({
    zone: {
      '*.hostile.example': { hugeMx: true },
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

async function evaluate(address: string): Promise<{ email: EmailFacts; bytes: number }> {
  const response = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody({ email: address }) });
  expect(response.statusCode).toBe(200);
  return { ...(response.json() as { email: EmailFacts }), bytes: response.body.length };
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
