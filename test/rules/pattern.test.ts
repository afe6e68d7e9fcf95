import { describe, expect, it } from 'vitest';
import { compilePattern, MAX_REGEX_INPUT, type Pattern } from '../../src/rules/pattern.js';

const compiled = (source: string): Pattern => {
  const pattern = compilePattern(source);
  if ('problem' in pattern) throw new Error(pattern.problem);
  return pattern;
};

describe('compilePattern accepts RE2 syntax', () => {
  it.each([
    ['^[0-9]{6,}$', '1234567', 'abc'],
    ['^(?:test|demo)[0-9]*@', 'demo42@x', 'x-demo@'],
    ['Headless|PhantomJS', 'HeadlessChrome', 'Chrome'],
    ['^[^@]+@[a-z]+\\.example$', 'jo@acme.example', 'jo@acme.example.com'],
    ['(?<tld>com|net)$', 'a.net', 'a.org'],
    ['\\p{L}+', 'é', '123'],
    ['\\pL\\x{e9}', 'ué', 'ue'],
    ['(?i)^admin', 'ADMIN@x', 'xadmin'],
  ])('%s matches %s, not %s', (source, yes, no) => {
    const pattern = compiled(source);
    expect(pattern.test(yes)).toBe(true);
    expect(pattern.test(no)).toBe(false);
  });
});

/**
 * Issue 11's patterns and the classic ReDoS ones, each with the input that makes a backtracking
 * engine take seconds to centuries. They are accepted and answer at once: were the matching
 * exponential (or cubic), this file would not finish.
 */
describe('catastrophic patterns for a backtracking engine are accepted and linear', () => {
  const long = (unit: string, tail: string) => unit.repeat(Math.floor((MAX_REGEX_INPUT - tail.length) / unit.length)) + tail;
  it.each([
    ['^(\\w?\\w?)+$', long('a', '!')],
    [`^${'[a-z]{0,16}'.repeat(8)}$`, long('a', '1')],
    ['(a+)+$', long('a', '!')],
    ['(a*)*b', long('a', '')],
    ['(a|aa)+$', long('a', '!')],
    ['^(a|a?)+$', long('a', '!')],
    ['(x+x+)+y', long('x', '')],
    ['^(([a-z])+.)+[A-Z]([a-z])+$', long('a', '!')],
    ['.*.*.*.*.*=.*', long('x', '')],
    ['^(\\w+\\s?)*$', long('word ', '!')],
  ])('%s', (source, input) => {
    const pattern = compiled(source);
    expect(input.length).toBeLessThanOrEqual(MAX_REGEX_INPUT);
    for (let i = 0; i < 20; i++) expect(pattern.test(input)).toBe(false);
  });
});

describe('compilePattern refuses, saying why', () => {
  it.each([
    ['(a)\\1', /not a valid RE2 regular expression \(invalid escape sequence: `\\1`/],
    ['foo(?=bar)', /not a valid RE2 regular expression \(invalid or unsupported Perl syntax: `\(\?=`/],
    ['(?<!x)y', /not a valid RE2 regular expression/],
    ['(', /not a valid RE2 regular expression \(missing closing \)/],
    ['\\u00e9', /invalid escape sequence/],
    ['(a{1000}){1000}', /invalid repeat count/],
    ['[a-z]{1000}', /compiles to \d+ instructions, more than 1000: use smaller repeat counts/],
    ['a'.repeat(201), /at most 200 characters/],
  ])('%s', (source, reason) => {
    const pattern = compilePattern(source);
    expect('problem' in pattern && pattern.problem).toMatch(reason);
  });
});
