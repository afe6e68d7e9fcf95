import { diffLines } from 'diff';
import { describe, expect, it } from 'vitest';
import { ruleFileData, writeRuleFile } from '../../src/rules/edit.js';

/** Structured edits written back into a rule file: what people wrote around an untouched rule stays with it. */
const yaml = [
  '# Why these scores.',
  'description: Sign-ups',
  'rules:',
  '  # tor: why 40',
  '  - library: ip_tor',
  '    score: 40 # tuned in May',
  '  # dc: corporate gateways',
  '  - library: ip_datacenter',
  '    score: "20"',
  '  - id: blocked',
  '    name: Blocked',
  '    score: 5',
  '    when: { field: email.domain, equals: a.example }',
  '',
].join('\n');
const rules = () => (ruleFileData(yaml) as { rules: Array<Record<string, unknown>> }).rules;

describe('writing a rule file edited as data', () => {
  it('changes only the value edited, keeping every comment and the flow style of a condition', () => {
    const [tor, dc, blocked] = rules();
    const out = writeRuleFile(yaml, { description: 'Sign-ups', rules: [tor, dc, { ...blocked, score: 7 }] });
    expect(out).toBe(yaml.replace('    score: 5\n', '    score: 7\n'));
  });

  it("takes a rule's comments with it when it is removed or moved, the first rule's too", () => {
    const [tor, dc, blocked] = rules();
    const removed = writeRuleFile(yaml, { description: 'Sign-ups', rules: [dc, blocked] });
    expect(removed).not.toContain('tor');
    expect(removed).toContain('  # dc: corporate gateways\n  - library: ip_datacenter\n');
    const moved = writeRuleFile(yaml, { description: 'Sign-ups', rules: [dc, tor, blocked] });
    expect(moved).toContain('  # dc: corporate gateways\n  - library: ip_datacenter\n    score: "20"\n  # tor: why 40\n  - library: ip_tor\n    score: 40 # tuned in May\n');
  });

  it('writes a value of another type as that type, with the comments it had', () => {
    const [tor, dc, blocked] = rules();
    const out = writeRuleFile(yaml, { description: 'Sign-ups', rules: [{ ...tor, score: 50 }, { ...dc, score: 20 }, blocked] });
    expect(out).toContain('    score: 50 # tuned in May\n');
    expect(out).toContain('    score: 20\n');
    expect(ruleFileData(out)).toMatchObject({ rules: [{ score: 50 }, { score: 20 }, { score: 5 }] });
  });

  it('writes a new file from data alone', () => {
    expect(writeRuleFile(null, { rules: [{ library: 'ip_tor', score: 50 }] })).toBe('rules:\n  - library: ip_tor\n    score: 50\n');
  });

  it('writes a new rule at its place, and cuts a rule out with its comment, leaving every other line as written', () => {
    const [tor, dc, blocked] = rules();
    const added = writeRuleFile(yaml, { description: 'Sign-ups', rules: [tor, { library: 'email_disposable', mode: 'dry_run' }, dc, blocked] });
    expect(added).toBe(yaml.replace('  # dc:', '  - library: email_disposable\n    mode: dry_run\n  # dc:'));
    const keyless = writeRuleFile('rules: []\n', { rules: [{ library: 'ip_tor' }] });
    expect(keyless).toBe('rules:\n  - library: ip_tor\n');
  });
});

/** A file as people write it: comments aligned in a column, flow maps, blank lines, quoting of their own. */
const aligned = [
  '# Sign-up rules, reviewed monthly.',
  'description: "Sign-ups"          # shown in the console',
  'thresholds: {review: 25, decline: 50}',
  '',
  'rules:',
  '  - library: email_disposable    # throw-away inboxes',
  '    score: 40                    # raised in May',
  '  - library: ip_velocity',
  '    params: {events_1h: 8}       # office NAT',
  '  # Country rules',
  '  - id: sanctioned',
  "    name: 'Sanctioned country'",
  '    score: 50',
  '    when: {field: ip.country_code, in: [KP, IR]}   # legal asked',
  '',
].join('\n');

/** The lines a diff from `before` to `after` removes and adds. */
const changedLines = (before: string, after: string) =>
  diffLines(before, after).filter((part) => part.added || part.removed).map((part) => `${part.added ? '+' : '-'}${part.value}`);

describe('an edit touches only the lines it changes', () => {
  const data = () => ruleFileData(aligned) as { rules: Array<Record<string, unknown>> } & Record<string, unknown>;

  it('one score changed: the diff is exactly that line, its aligned comment kept', () => {
    const file = data();
    file.rules[0]!.score = 45;
    expect(changedLines(aligned, writeRuleFile(aligned, file))).toEqual([
      '-    score: 40                    # raised in May\n',
      '+    score: 45                    # raised in May\n',
    ]);
  });

  it('a value inside a flow map (thresholds, a parameter, a list in a condition) changes in place', () => {
    const file = data();
    file.thresholds = { review: 30, decline: 50 };
    file.rules[1]!.params = { events_1h: 12 };
    (file.rules[2]!.when as { in: string[] }).in = ['KP', 'SY'];
    expect(changedLines(aligned, writeRuleFile(aligned, file))).toEqual([
      '-thresholds: {review: 25, decline: 50}\n', '+thresholds: {review: 30, decline: 50}\n',
      '-    params: {events_1h: 8}       # office NAT\n', '+    params: {events_1h: 12}       # office NAT\n',
      '-    when: {field: ip.country_code, in: [KP, IR]}   # legal asked\n', '+    when: {field: ip.country_code, in: [KP, SY]}   # legal asked\n',
    ]);
  });

  it('a key added or removed is one line in the diff; a quoted string stays quoted', () => {
    const file = data();
    file.rules[0]!.mode = 'dry_run';
    delete file.rules[1]!.params;
    file.rules[2]!.name = 'Country under sanctions';
    expect(changedLines(aligned, writeRuleFile(aligned, file))).toEqual([
      '+    mode: dry_run\n',
      '-    params: {events_1h: 8}       # office NAT\n',
      "-    name: 'Sanctioned country'\n", "+    name: 'Country under sanctions'\n",
    ]);
  });

  it('a flow map whose keys changed is written again on its own line, in flow style', () => {
    const file = data();
    file.rules[1]!.params = { events_1h: 8, events_24h: 40 };
    const out = writeRuleFile(aligned, file);
    expect(changedLines(aligned, out)).toEqual(['-    params: {events_1h: 8}       # office NAT\n', '+    params: { events_1h: 8, events_24h: 40 }\n']);
    expect(ruleFileData(out)).toEqual(file);
  });

  it('removing a rule takes its comment; the rest is untouched', () => {
    const file = data();
    file.rules.splice(2, 1);
    expect(writeRuleFile(aligned, file)).toBe(aligned.replace(/ {2}# Country rules\n[^]*# legal asked\n/, ''));
  });
});

