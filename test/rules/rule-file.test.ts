import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRuleDirectory } from '../../src/rules/directory.js';
import { formatProblem } from '../../src/rules/rule-file.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rules-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes one file, reads the directory as the service does, returns the problems as printed. */
async function problemsOf(text: string, name = 'account_register.yaml'): Promise<string[]> {
  writeFileSync(join(dir, name), text);
  const result = await readRuleDirectory(dir);
  if (result.error !== undefined) throw new Error(result.error);
  return result.files.flatMap((f) => f.problems ?? []).map((p) => formatProblem(p).replace(`${dir}/`, ''));
}

const custom = (when: string) => `rules:\n  - id: r\n    name: R\n    score: 10\n    when: ${when}\n`;

describe('velocity counters', () => {
  it('a file with counters, read by its rules, loads', async () => {
    const text = `velocity:\n  - { name: per_domain, key: email.domain, window: 1h }\n  - { name: per_user, key: user.user_id, window: 7d, event_types: [account_login] }\n  - { name: per_net, key: ip.network, window: 30d }\n${custom('{ all: [{ field: velocity.per_domain, gte: 3 }, { field: velocity.per_user, lt: 100 }] }')}  - library: domain_velocity\n    params: { signups_1h: 50 }\n`;
    expect(await problemsOf(text)).toEqual([]);
  });
});

describe('an invalid rule file is refused with the file, the line and the path inside it', () => {
  it.each([
    ['YAML syntax', 'rules:\n  - id: x\n   bad: indent\n', /^account_register\.yaml:3:\d+ \(file\): /],
    ['a duplicate key', 'rules: []\nrules: []\n', /^account_register\.yaml:2:1 \(file\): Map keys must be unique/],
    ['no rules list', 'thresholds: { review: 10, decline: 20 }\n', /^account_register\.yaml:1:1 rules: .*expected array, received undefined/],
    ['an unknown key, pointed at', 'rules:\n  - library: ip_tor\n    scroe: 10\n', /^account_register\.yaml:3:5 rules\[0\]\.scroe: Unrecognized key: "scroe"$/],
    ['an unknown library rule', 'rules:\n  - library: ip_teleport\n', /^account_register\.yaml:2:5 rules\[0\]\.library: unknown library rule "ip_teleport"/],
    ['a library rule with a condition', 'rules:\n  - library: ip_tor\n    when: { field: ip.asn, equals: 1 }\n', /rules\[0\]\.when: a library rule takes only score, mode and params/],
    ['a custom rule without a score', 'rules:\n  - id: r\n    name: R\n    when: { field: ip.asn, equals: 1 }\n', /:2:5 rules\[0\]: a custom rule needs "score"/],
    ['a score out of range', 'rules:\n  - library: ip_tor\n    score: 101\n', /:3:5 rules\[0\]\.score: Too big/],
    ['a fractional score', 'rules:\n  - library: ip_tor\n    score: 2.5\n', /rules\[0\]\.score: .*expected int/],
    ['an unknown mode', 'rules:\n  - library: ip_tor\n    mode: shadow\n', /rules\[0\]\.mode: Invalid option/],
    ['an unknown field', custom('{ field: email.domian, equals: x }'), /:5:13 rules\[0\]\.when\.field: unknown field "email\.domian"/],
    ['no operator', custom('{ field: email.domain }'), /rules\[0\]\.when: a condition on a field needs exactly one operator .* found none/],
    ['two operators', custom('{ field: email.domain, equals: a, in: [a] }'), /found equals, in/],
    ['a combinator with a field', custom('{ all: [{ field: ip.asn, equals: 1 }], field: ip.asn }'), /rules\[0\]\.when: a condition with "all" takes no other key/],
    ['an empty all', custom('{ all: [] }'), /rules\[0\]\.when\.all: Too small/],
    ['a value of the wrong type', custom('{ field: ip.asn, equals: "64501" }'), /rules\[0\]\.when\.equals: ip\.asn is a number: compare it with a number/],
    ['a list value of the wrong type', custom('{ field: ip.country_code, in: [GB, 1] }'), /rules\[0\]\.when\.in\[1\]: ip\.country_code is text: list string values/],
    ['an operator that does not fit the field', custom('{ field: ip.asn, ends_with: "1" }'), /rules\[0\]\.when\.ends_with: "ends_with" does not apply to ip\.asn, which is a number/],
    ['cidr on a text field', custom('{ field: email.domain, cidr: 10.0.0.0/8 }'), /"cidr" does not apply to email\.domain/],
    ['a malformed CIDR', custom('{ field: ip.address, cidr: [10.0.0.0/8, 10.0.0.0/33] }'), /rules\[0\]\.when\.cidr\[1\]: "10\.0\.0\.0\/33" is not an IP address or CIDR range/],
    ['a regex RE2 cannot run in linear time', custom('{ field: email.local_part, matches: "(a)\\\\1" }'), /:5:\d+ rules\[0\]\.when\.matches: not a valid RE2 regular expression \(invalid escape sequence/],
    ['an invalid regex', custom('{ field: email.local_part, matches: "[" }'), /rules\[0\]\.when\.matches: not a valid RE2 regular expression/],
    ['regexes over the file\'s budget', `rules:\n${[0, 1, 2].map((i) => `  - id: r${i}\n    name: R${i}\n    score: 1\n    when: { field: user.first_name, matches: "[a-z]{900}" }\n`).join('')}`,
      /:13:\d+ rules\[2\]\.when\.matches: the file's regular expressions compile to more than 2000 instructions together \(this one brings them to \d+\)/],
    ['an alias without its anchor', 'rules:\n  - *tor\n', /^account_register\.yaml:2:5 \(file\): alias \*tor has no anchor &tor before it$/],
    ['more than 100 alias copies', `x: &a [1]\nrules:\n${'  - *a\n'.repeat(101)}`, /^account_register\.yaml:3:5 \(file\): aliases expand to more than 100 copies/],
    ['a nested problem', custom('{ any: [{ not: { field: ip.asn, gt: x } }] }'), /rules\[0\]\.when\.any\[0\]\.not\.gt: /],
    ['thresholds out of order', 'thresholds: { review: 50, decline: 40 }\nrules: []\n', /^account_register\.yaml:1:1 thresholds: review must not be above decline/],
    ['the same rule twice', 'rules:\n  - library: ip_tor\n  - library: ip_tor\n', /:3:5 rules\[1\]: rule "ip_tor" appears twice/],
    ['a parameter the rule does not take', 'rules:\n  - library: ip_velocity\n    params:\n      events_2h: 3\n',
      /:4:7 rules\[0\]\.params\.events_2h: unknown parameter "events_2h": ip_velocity takes events_1h, events_24h$/],
    ['a parameter out of its bounds', 'rules:\n  - library: device_multi_account\n    params: { accounts_30d: 0 }\n',
      /rules\[0\]\.params\.accounts_30d: accounts_30d must be a whole number from 1 to 100$/],
    ['a fractional parameter', 'rules:\n  - library: impossible_travel\n    params: { speed_kmh: 900.5 }\n', /rules\[0\]\.params\.speed_kmh: speed_kmh must be a whole number/],
    ['params on a rule without any', 'rules:\n  - library: ip_tor\n    params: { x: 1 }\n', /rules\[0\]\.params\.x: unknown parameter "x": ip_tor takes no params/],
    ['a counter with an unknown key', 'velocity:\n  - { name: c, key: email.tld, window: 1h }\nrules: []\n', /^account_register\.yaml:2:\d+ velocity\[0\]\.key: unknown key "email\.tld" \(one of email\.domain, /],
    ['a window without a unit', 'velocity:\n  - { name: c, key: ip.address, window: 60 }\nrules: []\n', /velocity\[0\]\.window: .*expected string/],
    ['a window in weeks', 'velocity:\n  - { name: c, key: ip.address, window: 2w }\nrules: []\n', /velocity\[0\]\.window: a window is a whole number and a unit: m \(minutes\), h \(hours\) or d \(days\)/],
    ['a window past 30 days', 'velocity:\n  - name: c\n    key: ip.address\n    window: 31d\nrules: []\n', /^account_register\.yaml:4:5 velocity\[0\]\.window: a window is at most 30d$/],
    ['a window of part hours past 2 hours', 'velocity:\n  - { name: c, key: ip.address, window: 150m }\nrules: []\n', /velocity\[0\]\.window: a window longer than 2h is whole hours/],
    ['a counter named twice', 'velocity:\n  - { name: c, key: ip.address, window: 1h }\n  - { name: c, key: ip.network, window: 1h }\nrules: []\n', /:3:\d+ velocity\[1\]\.name: velocity counter "c" appears twice/],
    ['the library\'s counter name', 'velocity:\n  - { name: domain_velocity, key: ip.address, window: 1h }\nrules: []\n', /velocity\[0\]\.name: "domain_velocity" is the library rule domain_velocity's own counter/],
    ['more than 20 counters', `velocity:\n${Array.from({ length: 21 }, (_, i) => `  - { name: c${i}, key: ip.address, window: 1h }\n`).join('')}rules: []\n`, /^account_register\.yaml:1:1 velocity: at most 20 velocity counters per rule file$/],
    ['a rule reading a counter the file does not define', `velocity:\n  - { name: per_domain, key: email.domain, window: 1h }\n${custom('{ field: velocity.per_dommain, gte: 3 }')}`,
      /:7:13 rules\[0\]\.when\.field: no velocity counter "per_dommain": the file defines per_domain$/],
    ['a counter compared with text', `velocity:\n  - { name: per_domain, key: email.domain, window: 1h }\n${custom('{ field: velocity.per_domain, equals: many }')}`,
      /rules\[0\]\.when\.equals: velocity\.per_domain is a number: compare it with a number/],
    ['params on a custom rule', 'rules:\n  - id: r\n    name: R\n    score: 1\n    params: { x: 1 }\n    when: { field: ip.asn, equals: 1 }\n',
      /rules\[0\]\.params: params set a library rule's thresholds/],
  ])('%s', async (_name, text, expected) => {
    const problems = await problemsOf(text);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatch(expected);
  });

  it('refuses a file name that cannot be an event type', async () => {
    expect(await problemsOf('rules: []\n', 'account register.yaml')).toEqual([
      'account register.yaml (file): the file name is the event type: 1 to 64 letters, digits, _ or -',
    ]);
  });

  it('refuses two files for one event type', async () => {
    writeFileSync(join(dir, 'account_login.yaml'), 'rules: []\n');
    expect(await problemsOf('rules: []\n', 'account_login.yml')).toEqual([
      `account_login.yml (file): event type "account_login" is already defined by ${dir}/account_login.yaml`,
    ]);
  });

  it('reports every problem of a file, not only the first', async () => {
    expect(await problemsOf('rules:\n  - library: nope\n  - id: r\n    name: R\n    score: 1\n    when: { field: nope, equals: 1 }\n')).toHaveLength(2);
  });

  it('does not take other files for rule files', async () => {
    writeFileSync(join(dir, 'schema.json'), '{ "not": "a rule file" }');
    writeFileSync(join(dir, 'README.md'), '# rules');
    writeFileSync(join(dir, 'account_login.yaml'), 'rules: []\n');
    const result = await readRuleDirectory(dir);
    expect(result.files?.map((f) => f.eventType)).toEqual(['account_login']);
  });

  it('says when the directory cannot be read', async () => {
    expect((await readRuleDirectory(join(dir, 'missing'))).error).toMatch(/cannot read rules directory .*missing/);
  });
});
