import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluationBody, startTestApp, type TestApp } from '../support/app.js';
import { expectEvaluation, expectProblem } from '../support/contract.js';
import { postEvaluate } from '../support/fuzz.js';
import { ACCEPTED, REFUSED } from './syntax-vectors.js';

/**
 * Regression (issue 11, finding 11): against peers' published test vectors, addresses no mail server
 * accepts (comments, stray quotes, backslashes and brackets, a local part over 64 octets) were
 * answered 200. Each is now a 400 naming `email`, through the real app.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.app.close();
});

describe('e-mail syntax through HTTP', () => {
  it.each(REFUSED.map((v) => [v.source, v.why, v.address] as const))('%s vector, %s: 400 naming email', async (_source, _why, address) => {
    const problem = expectProblem(await postEvaluate(t, evaluationBody({ email: address })), 400, 'invalid_request');
    expect(problem.errors).toEqual([{ path: 'email', message: expect.any(String) as string }]);
  });

  it.each(ACCEPTED.map((v) => [v.source, v.why, v.address] as const))('%s vector, %s: 200, the address echoed', async (_source, _why, address) => {
    expect(expectEvaluation(await postEvaluate(t, evaluationBody({ email: address }))).email.address).toBe(address);
  });
});
