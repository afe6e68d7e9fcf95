import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATA_FILES, openEmailSources } from '../../src/email/sources.js';
import { FILE_CAPS } from '../../src/files/caps.js';
import { loadAsnCsv } from '../../src/ip/asn-csv.js';
import { loadAddressList } from '../../src/ip/lists.js';
import { loadMmdb } from '../../src/ip/maxmind.js';
import { keyOf } from '../../src/ip/numeric.js';
import { readAccountsFile } from '../../src/keys/accounts-file.js';
import { HOSTILE_FILES, hostileFile } from '../support/hostile-files.js';

/**
 * Issue 11, finding 5: every file the service reads goes through the bounded reader. Each reader,
 * given each file `stat` cannot bound, refuses it with the reason, promptly, and allocates nothing
 * near its size. (Rule files: test/rules/rule-book.test.ts and test/rules/http.test.ts.)
 */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'readers-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const readers: [string, (path: string) => Promise<unknown>][] = [
  ['an IP list', (path) => loadAddressList(path)],
  ['a MaxMind database', (path) => loadMmdb(path, 'city')],
  ['the ASN CSV', (path) => loadAsnCsv({ ipv4Num: path, ipv6: path })],
  ['the accounts file', (path) => readAccountsFile(path)],
];

describe.each(readers)('%s', (_reader, read) => {
  it.each(HOSTILE_FILES)('refuses %s', async (kind, reason) => {
    const path = hostileFile(kind, join(dir, 'file'));
    await expect(read(path)).rejects.toThrow(reason);
  });
});

describe('the e-mail domain lists in DATA_DIR', () => {
  it.each(HOSTILE_FILES)('refuse %s, reported against the file, while the service keeps its bundled lists', async (kind, reason) => {
    const path = hostileFile(kind, join(dir, DATA_FILES.additions));
    const sources = await openEmailSources({ dataDir: dir, reloadIntervalMs: 60_000, logger: pino({ level: 'silent' }) });
    try {
      const status = sources.status().find((s) => s.name === 'email.disposable.additions');
      expect(status).toMatchObject({ loaded: false, error: expect.stringContaining(path) });
      expect(status?.error).toMatch(reason);
      expect(sources.current().disposable.listed.match('mailinator.com')).toBe('mailinator.com');
    } finally {
      sources.close();
    }
  });
});

describe('the readers that stream lines', () => {
  it('read an IP list past one 64 KiB read, with CRLF line ends and comments', async () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24 # range ${i}\r`);
    writeFileSync(join(dir, 'list.txt'), `# header\r\n${lines.join('\n')}\n`);
    const list = await loadAddressList(join(dir, 'list.txt'));
    expect(list).toMatchObject({ entries: 10_000, malformed: 0 });
    expect(list.has(keyOf({ address: '10.39.15.9', version: 4 }))).toBe(true);
    expect(list.has(keyOf({ address: '10.40.0.1', version: 4 }))).toBe(false);
  });

  it('refuse an IP list one byte over its cap', async () => {
    writeFileSync(join(dir, 'list.txt'), '#'.repeat(FILE_CAPS.addressList + 1));
    await expect(loadAddressList(join(dir, 'list.txt'))).rejects.toThrow(`larger than ${FILE_CAPS.addressList} bytes`);
  });

  it('stop an e-mail list at its first bad line, naming the file and the line', async () => {
    const good = Array.from({ length: 5_000 }, (_, i) => `throwaway${i}.example # ours`).join('\r\n');
    writeFileSync(join(dir, DATA_FILES.additions), `${good}\r\nnot a domain\r\n`);
    const sources = await openEmailSources({ dataDir: dir, reloadIntervalMs: 60_000, logger: pino({ level: 'silent' }) });
    try {
      expect(sources.status().find((s) => s.name === 'email.disposable.additions')?.error)
        .toBe(`${join(dir, DATA_FILES.additions)}:5001: "not a domain" is not a domain`);
    } finally {
      sources.close();
    }
  });
});
