import type { FastifyInstance } from 'fastify';
import type { Evaluator } from '../../evaluation/evaluate.js';
import { logRecordOf } from '../../evaluation/log-record.js';
import type { RuleBook } from '../../rules/ports.js';
import type { LogRecord } from '../../core/log-record.js';
import { validateEvaluationRequest } from '../../request/evaluation-request.js';
import { problems } from '../problem.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** What the one log line of an evaluation reports (see request-log.ts). */
    evaluationLog?: Record<string, unknown>;
  }
}

export const EVALUATE_PATH = '/v1/risk/evaluate';

export interface EvaluateRouteDependencies {
  evaluate: Evaluator;
  rules: RuleBook;
  /** The evaluation log: takes the record and returns at once (a bounded queue, written off the request path). */
  log: { record(record: LogRecord): void };
}

export function registerEvaluateRoute(scope: FastifyInstance, deps: EvaluateRouteDependencies): void {
  scope.post(EVALUATE_PATH, async (request, reply) => {
    const validation = validateEvaluationRequest(request.body);
    if (!validation.ok) throw problems.invalidRequest(validation.errors);
    const body = validation.value;
    const account = request.account!;

    const eventTypes = deps.rules.eventTypes(account);
    if (!eventTypes.includes(body.event_type)) {
      throw problems.invalidRequest([{ path: 'event_type', message: `must be one of: ${eventTypes.join(', ')}` }]);
    }
    const evaluation = await deps.evaluate(body, account);
    // The rule set can disappear between the check and here only through a reload; say so plainly.
    if (!evaluation) throw problems.invalidRequest([{ path: 'event_type', message: `no rule set for "${body.event_type}"` }]);

    const { response, outcome } = evaluation;
    request.evaluationLog = {
      id: response.id,
      account: account.id,
      event_type: response.event_type,
      fraud_score: response.score.fraud_score,
      state: response.score.state,
      rules: outcome.details.map((d) => d.rule_name),
      email_domain: response.email.domain,
      unavailable: response.unavailable,
      took_ms: response.took_ms,
    };
    const json = JSON.stringify(response);
    deps.log.record(logRecordOf(account, body, evaluation, json));
    return reply.code(200).type('application/json; charset=utf-8').send(json);
  });

  scope.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: EVALUATE_PATH,
    handler: async (request) => {
      throw problems.methodNotAllowed(request.method, ['POST']);
    },
  });
}
