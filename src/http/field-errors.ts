import type { z } from 'zod';
import type { FieldError } from '../request/evaluation-request.js';

/** A zod error as the problem's `errors`: one entry per field, the first problem of each, `(body)` for the whole. */
export function fieldErrorsOf(error: z.ZodError): FieldError[] {
  const errors: FieldError[] = [];
  for (const issue of error.issues) {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(body)';
    const message = issue.code === 'unrecognized_keys' ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}` : issue.message;
    if (!errors.some((e) => e.path === path)) errors.push({ path, message });
  }
  return errors;
}
