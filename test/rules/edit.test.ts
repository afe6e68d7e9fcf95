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
});
