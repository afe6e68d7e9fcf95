import { describe, expect, it } from 'vitest';
import { regexProblem } from '../../src/rules/safe-regex.js';

describe('regexProblem', () => {
  it.each([
    '^[0-9]{6,}$',
    '^(?:test|demo)[0-9]*@',
    'Headless',
    '^[^@]+@[a-z]+\\.example$',
    '(ab){2}',
    '(?<tld>com|net)$',
    '(a+)?',
    '\\p{L}+',
    '[(]+',
    'a{1,16}b{1,16}c{1,16}',
  ])('accepts %s', (pattern) => {
    expect(regexProblem(pattern)).toBeNull();
  });

  it.each([
    ['(a+)+$', 'repeated group'],
    ['(a*)*b', 'repeated group'],
    ['(a|ab)*c', 'repeated group'],
    ['(?:x+y)+', 'repeated group'],
    ['((a+))+', 'repeated group'],
    ['(a|b){2,}', 'repeated group'],
    ['(\\w+)*?$', 'repeated group'],
    ['(a)\\1', 'back-references'],
    ['(?<x>a)\\k<x>', 'back-references'],
    ['foo(?=bar)', 'look-ahead'],
    ['(?<!x)y', 'look-ahead'],
    ['.*.*.*x', 'unbounded'],
    ['a+b+c{1,}', 'unbounded'],
    ['[a-z]{1,50}[a-z]{1,50}[a-z]{1,50}', 'unbounded'],
    ['(', 'not a valid regular expression'],
    ['a'.repeat(201), 'at most 200'],
  ])('refuses %s', (pattern, reason) => {
    expect(regexProblem(pattern)).toContain(reason);
  });
});
