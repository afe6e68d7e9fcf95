import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { parseEmail, type ParsedEmail } from '../../src/email/address.js';
import { createEmailInspector, type EmailIntelligence } from '../../src/email/index.js';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';

const zone: Zone = {
  'mx.test': { MX: [{ exchange: 'mx2.mx.test', priority: 20 }, { exchange: 'MX1.mx.test.', priority: 10 }] },
  'nullmx.test': { MX: [{ exchange: '.', priority: 0 }] },
  'implicit.test': { A: ['192.0.2.10'] },
  'implicit6.test': { AAAA: ['2001:db8::10'] },
  'nomail.test': {},
  'cname.test': { CNAME: 'mx.test' },
  'fresh-throwaway.test': { MX: [{ exchange: 'mail.mailinator.com', priority: 10 }] },
  'dummy-backup.test': { MX: [{ exchange: 'mail.mailinator.com', priority: 10 }, { exchange: 'mx.dummy-backup.test', priority: 20 }] },
  'dummy-primary.test': { MX: [{ exchange: 'mx.dummy-primary.test', priority: 5 }, { exchange: 'mail.mailinator.com', priority: 10 }] },
  'loopback.test': { MX: [{ exchange: '127.0.0.1', priority: 10 }, { exchange: 'localhost', priority: 20 }] },
  'loopback-and-real.test': { MX: [{ exchange: 'localhost', priority: 5 }, { exchange: 'mx1.mx.test', priority: 10 }] },
  'custom-host.test': { MX: [{ exchange: 'in.throwaway-host.example', priority: 10 }] },
  'mailinator.com': { MX: [{ exchange: 'mail.mailinator.com', priority: 10 }] },
  'gmail.com': { MX: [{ exchange: 'gmail-smtp-in.l.google.com', priority: 5 }] },
  'anonaddy.com': { MX: [{ exchange: 'mail.anonaddy.me', priority: 10 }] },
  'truncated.test': { MX: [{ exchange: 'mx.truncated.test', priority: 10 }] },
};

const TIMEOUT = 600;

let dns: TestDnsServer;
let dataDir: string;
let logLines: Array<Record<string, unknown>>;
let inspector: EmailIntelligence;

function email(address: string): ParsedEmail {
  const parsed = parseEmail(address);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

async function open(): Promise<EmailIntelligence> {
  const config = loadConfig({ DATA_DIR: dataDir, DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: String(TIMEOUT) });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  inspector = await createEmailInspector({ config, logger: pino({ level: 'debug' }, sink) });
  return inspector;
}

const inspect = (address: string, signal = new AbortController().signal) => inspector.inspect(email(address), signal);

/** Runs an inspection whose DNS cannot answer, moving fake time past the deadline. */
async function inspectTimingOut(address: string) {
  const before = dns.queries.length;
  const pending = inspect(address);
  await dns.waitForQueries(before + 1);
  await vi.advanceTimersByTimeAsync(TIMEOUT);
  return pending;
}

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  dns = await startDnsServer({
    zone,
    faults: {
      'servfail.test': { kind: 'servfail' },
      'refused.test': { kind: 'refused' },
      'dropped.test': { kind: 'drop' },
      'truncated.test': { kind: 'truncate' },
    },
  });
  dataDir = await mkdtemp(join(tmpdir(), 'email-data-'));
  logLines = [];
});

afterEach(async () => {
  vi.useRealTimers();
  await inspector?.close();
  await dns.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('deliverability (RFC 5321 §5.1, RFC 7505)', () => {
  it.each([
    ['MX records', 'jane@mx.test', 'deliverable', [{ exchange: 'mx1.mx.test', priority: 10 }, { exchange: 'mx2.mx.test', priority: 20 }]],
    ['MX records behind a CNAME', 'jane@cname.test', 'deliverable', [{ exchange: 'mx1.mx.test', priority: 10 }, { exchange: 'mx2.mx.test', priority: 20 }]],
    ['MX records fetched over TCP after truncation', 'jane@truncated.test', 'deliverable', [{ exchange: 'mx.truncated.test', priority: 10 }]],
    ['a null MX', 'jane@nullmx.test', 'undeliverable', [{ exchange: '.', priority: 0 }]],
    ['MX hosts no one can reach (RFC 5321 §5.1: none usable)', 'jane@loopback.test', 'undeliverable', [{ exchange: '127.0.0.1', priority: 10 }, { exchange: 'localhost', priority: 20 }]],
    ['a usable MX host beside one no one can reach', 'jane@loopback-and-real.test', 'deliverable', [{ exchange: 'mx1.mx.test', priority: 10 }]],
    ['NXDOMAIN', 'jane@nowhere.test', 'undeliverable', []],
    ['no MX but an A record (implicit MX)', 'jane@implicit.test', 'deliverable', []],
    ['no MX but an AAAA record (implicit MX)', 'jane@implicit6.test', 'deliverable', []],
    ['no MX and no address', 'jane@nomail.test', 'undeliverable', []],
  ] as const)('%s → %s', async (_label, address, deliverability, mx) => {
    await open();
    const report = await inspect(address);
    expect(report.facts).toMatchObject({ deliverability, deliverable: deliverability === 'deliverable', mx_records: mx });
    expect(report.unavailable).not.toContain('email.mx');
  });

  it.each(['servfail.test', 'refused.test'])('is unknown, not undeliverable, when the server answers %s', async (domain) => {
    await open();
    const report = await inspect(`jane@${domain}`);
    expect(report.facts).toMatchObject({ deliverability: 'unknown', deliverable: null, mx_records: null });
    expect(report.unavailable).toContain('email.mx');
  });

  it('is unknown when the lookup times out, and answers at the deadline', async () => {
    await open();
    const report = await inspectTimingOut('jane@dropped.test');
    expect(report.facts).toMatchObject({ deliverability: 'unknown', deliverable: null });
    expect(report.unavailable).toEqual(['email.mx', 'email.disposable']);
  });

  it('is unknown when the implicit-MX address lookup fails and the other finds nothing', async () => {
    await open();
    dns.setZone('half.test', { AAAA: [] });
    dns.setFault('half.test/A', { kind: 'servfail' });
    const report = await inspect('x@half.test');
    expect(report.facts).toMatchObject({ deliverability: 'unknown', deliverable: null });
  });

  it('is deliverable when one address family answers even if the other fails', async () => {
    await open();
    dns.setFault('implicit.test/AAAA', { kind: 'refused' });
    expect((await inspect('x@implicit.test')).facts).toMatchObject({ deliverability: 'deliverable', deliverable: true });
  });

  it('honours the evaluation’s signal', async () => {
    await open();
    const controller = new AbortController();
    const pending = inspect('jane@dropped.test', controller.signal);
    await dns.waitForQueries(1);
    controller.abort();
    expect((await pending).facts.deliverability).toBe('unknown');
  });

  it.each(['jane@mx.test', 'jane@nullmx.test', 'jane@nowhere.test', 'jane@implicit.test', 'jane@nomail.test', 'x@mailinator.com'])(
    'answers %s from the caches alone, as the look-up did, only while the answers live',
    async (address) => {
      await open();
      expect(inspector.inspectCached(email(address))).toBeUndefined();
      const looked = await inspect(address);
      const queries = dns.queries.length;
      expect(inspector.inspectCached(email(address))).toEqual(looked);
      expect(inspector.inspectCached(email(address.replace(/^[^@]+/, 'other')))?.facts.address).toBe(address.replace(/^[^@]+/, 'other'));
      expect(dns.queries.length).toBe(queries);
      await vi.advanceTimersByTimeAsync(3_601_000); // past the longest TTL the cache keeps
      expect(inspector.inspectCached(email(address))).toBeUndefined();
    },
  );

  it('never answers from the caches what could not be looked up', async () => {
    await open();
    await inspect('jane@servfail.test');
    expect(inspector.inspectCached(email('jane@servfail.test'))).toBeUndefined();
  });

  it('answers from the cache without asking again', async () => {
    await open();
    await inspect('a@mx.test');
    await inspect('b@MX.test');
    expect(dns.queries.filter((q) => q.name === 'mx.test')).toHaveLength(1);
  });
});

describe('disposable', () => {
  it('is true on a list hit, subdomains included, even when DNS fails', async () => {
    await open();
    dns.setFault('mailinator.com', { kind: 'servfail' });
    const report = await inspect('x@mailinator.com');
    expect(report.facts).toMatchObject({ disposable: true, deliverable: null, free_provider: false });
    expect(report.unavailable).toEqual(['email.mx']);
    expect((await inspect('x@sub.mailinator.com')).facts.disposable).toBe(true);
  });

  it('is true when a mail host belongs to a disposable service, whatever dummy hosts stand beside it', async () => {
    // One dummy backup MX used to hide the throw-away service (every host had to be disposable);
    // a dummy primary would hide it from a check of the most preferred hosts alone.
    await open();
    expect((await inspect('x@fresh-throwaway.test')).facts.disposable).toBe(true);
    expect((await inspect('x@dummy-backup.test')).facts.disposable).toBe(true);
    expect((await inspect('x@dummy-primary.test')).facts.disposable).toBe(true);
    expect((await inspect('x@mx.test')).facts.disposable).toBe(false);
    expect((await inspect('x@loopback.test')).facts.disposable).toBe(false);
  });

  it('is unknown when no list has the domain and its MX could not be looked up', async () => {
    await open();
    const report = await inspect('x@servfail.test');
    expect(report.facts.disposable).toBeNull();
    expect(report.unavailable).toEqual(['email.mx', 'email.disposable']);
  });

  it('is false for a mainstream provider even when DNS fails', async () => {
    await open();
    dns.setFault('gmail.com', { kind: 'servfail' });
    const report = await inspect('Jane.Doe+x@gmail.com');
    expect(report.facts).toMatchObject({ disposable: false, free_provider: true, deliverable: null, canonical: 'janedoe@gmail.com' });
    expect(report.unavailable).toEqual(['email.mx']);
  });

  it('calls a relay a relay, never disposable, even though a vendor list has it', async () => {
    await open();
    expect((await inspect('alias@anonaddy.com')).facts).toMatchObject({ relay: true, disposable: false, free_provider: false });
    expect((await inspect('alias@jane.anonaddy.com')).facts).toMatchObject({ relay: true, disposable: false });
  });
});

describe('DATA_DIR lists', () => {
  it('adds, allows and extends the MX hosts from the operator’s files', async () => {
    await writeFile(join(dataDir, 'disposable-domains.txt'), '# ours\nmx.test\n');
    await writeFile(join(dataDir, 'disposable-allowlist.txt'), 'mailinator.com\n');
    await writeFile(join(dataDir, 'disposable-mx-hosts.txt'), 'throwaway-host.example\n');
    await open();
    expect((await inspect('x@mx.test')).facts.disposable).toBe(true);
    expect((await inspect('x@mailinator.com')).facts.disposable).toBe(false);
    expect((await inspect('x@custom-host.test')).facts.disposable).toBe(true);
  });

  it('reloads a changed file and refuses a malformed one, keeping the last good copy', async () => {
    const additions = join(dataDir, 'disposable-domains.txt');
    await writeFile(additions, 'implicit.test\n');
    await open();
    expect((await inspect('x@implicit.test')).facts.disposable).toBe(true);

    expect((await inspect('x@nomail.test')).facts.disposable).toBe(false);
    await writeFile(additions, 'implicit.test\nnomail.test\n');
    await inspector.refresh();
    // The domain's facts were worked out before the reload; the new list is what answers now.
    expect(inspector.inspectCached(email('x@nomail.test'))?.facts.disposable).toBe(true);
    expect((await inspect('x@nomail.test')).facts.disposable).toBe(true);

    await writeFile(additions, 'implicit.test\nthis is not a domain\n');
    await inspector.refresh();
    expect((await inspect('x@nomail.test')).facts.disposable).toBe(true);
    const status = inspector.status().find((s) => s.name === 'email.disposable.additions');
    expect(status).toMatchObject({ loaded: true, entries: 2, source: additions });
    expect(status?.error).toContain(`${additions}:2`);
    expect(logLines.some((l) => l.level === 50 && String(l.msg).includes(additions))).toBe(true);

    await rm(additions);
    await inspector.refresh();
    expect((await inspect('x@nomail.test')).facts.disposable).toBe(false);
    expect(inspector.status().find((s) => s.name === 'email.disposable.additions')).toMatchObject({ loaded: false, entries: null, error: null });
  });

  it('ends a list load in progress when closed: no refusal logged, the file not taken', async () => {
    await open();
    const additions = join(dataDir, 'disposable-domains.txt');
    await writeFile(additions, Array.from({ length: 50_000 }, (_, i) => `throwaway${i}.example`).join('\n'));
    const refreshing = inspector.refresh();
    await inspector.close();
    await refreshing;
    expect(logLines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(inspector.status().find((s) => s.name === 'email.disposable.additions')).toMatchObject({ loaded: false, error: null });
  });

  it('reports every list with its entry count', async () => {
    await writeFile(join(dataDir, 'disposable-allowlist.txt'), 'a.example\nb.example\n');
    await open();
    const status = inspector.status();
    expect(status.map((s) => s.name)).toEqual([
      'email.disposable.tompec',
      'email.disposable.blocklist',
      'email.disposable.fakefilter',
      'email.disposable.mailchecker',
      'email.disposable.burner',
      'email.disposable.disposable_github',
      'email.disposable.freemail',
      'email.disposable.agreed',
      'email.disposable.additions',
      'email.disposable.allowlist',
      'email.disposable.mx_hosts.additions',
      'email.disposable.agreed.fetched',
      'email.disposable.mx_hosts',
      'email.relay',
      'email.free_provider',
      'email.public_suffix_list',
    ]);
    expect(status.find((s) => s.name === 'email.public_suffix_list')?.source).toMatch(/^tldts@\d+\.\d+\.\d+$/);
    expect(status.find((s) => s.name === 'email.disposable.allowlist')).toMatchObject({ loaded: true, entries: 2, error: null });
    expect(status.find((s) => s.name === 'email.disposable.tompec')?.entries).toBeGreaterThan(100_000);
    expect(status.every((s) => s.type === 'list')).toBe(true);
  });
});

describe('the other facts', () => {
  it('flags role accounts, suggests typo fixes and keeps the address as sent', async () => {
    await open();
    dns.setZone('gmial.com', { MX: [{ exchange: 'mx.gmial.com', priority: 10 }] });
    const report = await inspect('Postmaster@GMIAL.com');
    expect(report.facts).toMatchObject({
      address: 'Postmaster@GMIAL.com',
      normalized: 'Postmaster@gmial.com',
      domain: 'gmial.com',
      role_account: true,
      suggested_domain: 'gmail.com',
      free_provider: false,
      relay: false,
    });
  });
});

describe('the deadline', () => {
  it('bounds the whole e-mail lookup by DNS_TIMEOUT_MS, implicit-MX lookups included', async () => {
    await open();
    dns.setZone('late-address.test', {});
    dns.setFault('late-address.test/MX', { kind: 'delay', ms: 150 });
    dns.setFault('late-address.test/A', { kind: 'drop' });
    dns.setFault('late-address.test/AAAA', { kind: 'drop' });
    // MX says NODATA at 150 ms; each address lookup alone could run to 150 + 600 ms.
    const pending = inspect('x@late-address.test');
    await dns.waitForQueries(1);
    await vi.advanceTimersByTimeAsync(150);
    await dns.waitForQueries(3);
    await vi.advanceTimersByTimeAsync(450);
    const report = await pending;
    expect(report.facts.deliverability).toBe('unknown');
    expect(report.unavailable).toContain('email.mx');
  });
});
