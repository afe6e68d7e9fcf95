import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { forPeople } from '../../console/src/api/messages.js';

/**
 * The console says zod's field messages for people (issue 27: "Enter a comment", not "Too small:
 * expected string to have >=1 characters"). Checked against the messages zod itself makes, so a
 * new zod wording fails here rather than reaching an analyst.
 */
const messageOf = (schema: z.ZodType, value: unknown) => {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('expected a refusal');
  return parsed.error.issues[0]!.message;
};

describe('field messages for people', () => {
  it('rewords zod\'s own messages', () => {
    expect(forPeople(messageOf(z.string().min(1), ''))).toBe('Enter a value');
    expect(forPeople(messageOf(z.object({ comment: z.string() }), {}))).toBe('Enter a value');
    expect(forPeople(messageOf(z.string().min(3), 'ab'))).toBe('Enter at least 3 characters');
    expect(forPeople(messageOf(z.string().max(5), 'too long'))).toBe('Use at most 5 characters');
    expect(forPeople(messageOf(z.number().int().min(1), 0))).toBe('Enter 1 or more');
    expect(forPeople(messageOf(z.number().max(10), 11))).toBe('Enter 10 or less');
    expect(forPeople(messageOf(z.enum(['approve', 'decline']), 'maybe'))).toBe('Choose one of approve, decline');
  });

  it('keeps what the API wrote for people itself', () => {
    expect(forPeople('must be an e-mail address')).toBe('must be an e-mail address');
  });
});
