import { createListBook } from '../../src/lists/list-book.js';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createEvaluator } from '../../src/evaluation/evaluate.js';
import type { EmailFacts } from '../../src/email/facts.js';
import type { Report } from '../../src/core/ports.js';
import type { EmailInspector } from '../../src/email/facts.js';
import type { RuleBook } from '../../src/rules/ports.js';
import type { StoredRuleBook } from '../../src/rules/rule-book.js';
import { validateEvaluationRequest, type EvaluationRequest } from '../../src/request/evaluation-request.js';
import { unknownEmail } from '../../src/evaluation/unknown.js';
import { createIpInspector } from '../../src/ip/index.js';
import { ruleBookFromDirectory } from '../support/rules.js';

const DEADLINE = 300;
const account = { id: 'default' };
const logger = pino({ level: 'silent' });

function request(email = 'Jane.Doe+news@gmail.com'): EvaluationRequest {
  const result = validateEvaluationRequest({ ip: '10.1.2.3', email, event_type: 'account_register' });
  if (!result.ok) throw new Error('invalid test request');
  return result.value;
}

/**
 * The real rule book and IP step, and an e-mail step whose answer, and whether it honours its
 * abort signal, the test decides: only such a step shows what the evaluator's own deadline guarantees.
 */
async function evaluatorWith(inspect: EmailInspector['inspect'], inspectCached: EmailInspector['inspectCached'] = () => undefined, ruleBook?: (real: StoredRuleBook) => RuleBook) {
  const config = loadConfig({ RULES_DIR: 'rules', DATA_DIR: 'test/no-such-data-dir' });
  const [real, ip] = await Promise.all([ruleBookFromDirectory(config.rulesDir), createIpInspector({ config, logger, openData: null })]);
  const rules = ruleBook?.(real) ?? real;
  const email: EmailInspector = { inspect, inspectCached, status: () => [], close: async () => {} };
  const errors: unknown[] = [];
  const evaluate = createEvaluator({ email, ip, rules, store: { available: true }, history: null, lists: createListBook(), deadlineMs: DEADLINE, onStepError: (_step, error) => errors.push(error) });
  return { evaluate, errors, close: () => Promise.all([rules.close(), ip.close()]) };
}

let close: (() => Promise<unknown>) | undefined;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(async () => {
  vi.useRealTimers();
  await close?.();
  close = undefined;
});

describe('the evaluation deadline', () => {
  it('answers without a step that ignores its abort signal, once the deadline and its grace have passed', async () => {
    const t = await evaluatorWith(() => new Promise<Report<EmailFacts>>(() => {}));
    close = t.close;
    let settled = false;
    const pending = t.evaluate(request(), account).then((r) => ((settled = true), r));
    await vi.advanceTimersByTimeAsync(DEADLINE);
    expect(settled).toBe(false); // the step gets a grace to answer with what it knows
    await vi.advanceTimersByTimeAsync(50);
    const evaluation = await pending;
    expect(evaluation!.response.email).toMatchObject({ deliverable: null, deliverability: 'unknown', disposable: null });
    // What needs no I/O is still known: the canonical form, the role check, the routability of the address.
    expect(evaluation!.response.email).toMatchObject({ canonical: 'janedoe@gmail.com', role_account: false });
    expect(evaluation!.response.ip.is_bogon).toBe(true);
    expect(evaluation!.response.unavailable).toEqual(expect.arrayContaining(['email.mx', 'email.disposable', 'rule:email_undeliverable']));
    expect(evaluation!.response.score.details).toEqual([]);
  });

  it('takes the answer of a step that stops at the signal with what it knows, and clears its timers', async () => {
    const t = await evaluatorWith(
      (email, signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => {
            const report = unknownEmail(email, ['email.mx']);
            resolve({ ...report, facts: { ...report.facts, disposable: true } });
          }),
        ),
    );
    close = t.close;
    const pending = t.evaluate(request('x@throwaway.example'), account);
    await vi.advanceTimersByTimeAsync(DEADLINE);
    const evaluation = await pending;
    expect(evaluation!.response.email.disposable).toBe(true);
    expect(evaluation!.response.unavailable).toContain('email.mx');
    expect(evaluation!.response.score.details.map((d) => d.rule_name)).toEqual(['Email address is disposable']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('degrades, and reports, a step that throws', async () => {
    const t = await evaluatorWith(async () => {
      throw new Error('bug');
    });
    close = t.close;
    const evaluation = await t.evaluate(request(), account);
    expect(evaluation!.response.email.deliverability).toBe('unknown');
    expect(t.errors).toHaveLength(1);
  });

  it('degrades, and reports, a cache read that throws', async () => {
    const t = await evaluatorWith(
      () => Promise.reject(new Error('not reached')),
      () => {
        throw new Error('bug');
      },
    );
    close = t.close;
    const evaluation = await t.evaluate(request(), account);
    expect(evaluation!.response.email.deliverability).toBe('unknown');
    expect(t.errors).toEqual([new Error('bug')]);
  });
});

describe('an answer from the caches', () => {
  it('is taken as it is: no look-up, no deadline armed', async () => {
    const cached = unknownEmail(request().parsedEmail, []);
    const report = { ...cached, facts: { ...cached.facts, deliverable: true, deliverability: 'deliverable' as const, disposable: true } };
    const inspect = vi.fn(() => Promise.reject(new Error('not reached')));
    const t = await evaluatorWith(inspect, () => report);
    close = t.close;
    const pending = t.evaluate(request(), account);
    expect(vi.getTimerCount()).toBe(0);
    const evaluation = await pending;
    expect(inspect).not.toHaveBeenCalled();
    expect(evaluation!.response.email).toMatchObject({ deliverability: 'deliverable', disposable: true });
    expect(evaluation!.response.score.details.map((d) => d.rule_name)).toEqual(['Email address is disposable']);
  });
});

describe('a shadow rule set', () => {
  const disposable = () => {
    const cached = unknownEmail(request().parsedEmail, []);
    return { ...cached, facts: { ...cached.facts, deliverable: true, deliverability: 'deliverable' as const, disposable: true } };
  };

  it('is scored on the same context as the live set, and kept apart from the answer', async () => {
    // The live file in shadow too: the same facts must give the same outcome.
    const t = await evaluatorWith(() => Promise.reject(new Error('not reached')), disposable, (real) => ({ ...real, shadow: (account, context) => ({ ...real.evaluate(account, context)!, version: 7 }) }));
    close = t.close;
    const evaluation = (await t.evaluate(request(), account))!;
    expect(evaluation.shadow).toMatchObject({ version: 7, state: evaluation.outcome.state, fraud_score: evaluation.outcome.fraud_score, fired: evaluation.outcome.fired });
    expect(evaluation.outcome.fired).toEqual(['email_disposable']);
    expect(JSON.stringify(evaluation.response)).not.toContain('shadow');
  });

  it('that throws is reported, logs no shadow outcome, and leaves the live answer as it was', async () => {
    const plain = await evaluatorWith(() => Promise.reject(new Error('not reached')), disposable);
    const expected = (await plain.evaluate(request(), account))!;
    await plain.close();
    const t = await evaluatorWith(() => Promise.reject(new Error('not reached')), disposable, (real) => ({ ...real, shadow: () => {
      throw new Error('shadow bug');
    } }));
    close = t.close;
    const evaluation = (await t.evaluate(request(), account))!;
    expect(evaluation.shadow).toBeNull();
    expect(t.errors).toEqual([new Error('shadow bug')]);
    expect(evaluation.outcome).toEqual(expected.outcome);
    expect(evaluation.response.score).toEqual(expected.response.score);
    expect(evaluation.response.unavailable).toEqual(expected.response.unavailable);
  });
});
