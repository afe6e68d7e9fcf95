import { describe, expect, it } from 'vitest';
import { loadBundledLists } from '../../src/email/bundled.js';
import { DISPOSABLE_MX_HOSTS } from '../../src/email/disposable-mx-hosts.js';
import { DomainList } from '../../src/email/domain-list.js';
import { parseDomainList } from '../../src/email/list-file.js';
import { RELAY_DOMAINS } from '../../src/email/relay.js';
import { MAJOR_PROVIDERS } from '../../src/email/typo.js';

describe('DomainList', () => {
  const list = new DomainList(['mailinator.com', 'edu.pl', 'tk.example.net']);

  it('matches a domain and its subdomains', () => {
    expect(list.match('mailinator.com')).toBe('mailinator.com');
    expect(list.match('a.b.mailinator.com')).toBe('mailinator.com');
    expect(list.match('notmailinator.com')).toBeNull();
  });

  it('does not spread a shared registry suffix to its subdomains', () => {
    expect(list.match('edu.pl')).toBe('edu.pl');
    expect(list.match('uw.edu.pl')).toBeNull();
  });
});

describe('parseDomainList', () => {
  it('reads domains, skipping comments and blank lines', () => {
    expect(parseDomainList('# mine\nFoo.example\n\n*.bar.example  # wildcard\n@baz.example\nbücher.example\r\n', 'x.txt')).toEqual({
      domains: ['foo.example', 'bar.example', 'baz.example', 'xn--bcher-kva.example'],
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
  const disposable = DomainList.union(...bundled.disposable.map((l) => l.domains));

  it('loads every vendor list with its version', () => {
    for (const list of [...bundled.disposable, bundled.freeProviders]) {
      expect(list.source).toMatch(/@\d+\.\d+\.\d+\//);
      expect(list.domains.length).toBeGreaterThan(300);
    }
  });

  it('keeps every curated disposable mail host on the vendor lists', () => {
    expect(DISPOSABLE_MX_HOSTS.filter((h) => disposable.match(h) === null)).toEqual([]);
  });

  it('never lets a vendor list flag a major provider', () => {
    expect(MAJOR_PROVIDERS.filter((p) => disposable.match(p) !== null)).toEqual([]);
  });

  it('knows vendor lists include relays, which is why relays are checked first', () => {
    expect(RELAY_DOMAINS.filter((r) => disposable.match(r) !== null)).toEqual(expect.arrayContaining(['anonaddy.com', '33mail.com']));
  });
});
