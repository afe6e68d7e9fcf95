import type { LogRecord } from '../core/log-record.js';
import type { Evaluation } from './evaluate.js';
import type { Account } from '../core/ports.js';
import type { EvaluationRequest } from '../request/evaluation-request.js';

/**
 * What the evaluation log keeps of one evaluation: the request as validated (raw e-mail and IP,
 * user, device), the answer exactly as sent (the facts as they were, what was unavailable, the
 * outcome) and the rule set version that decided: enough to replay it without enriching it again.
 * `responseJson` is the string that was sent, reused rather than serialised twice. The shadow rule
 * set's outcome, when one ran, goes beside it (never in the answer).
 */
export function logRecordOf(account: Account, request: EvaluationRequest, { response, outcome, shadow }: Evaluation, responseJson: string): LogRecord {
  return {
    id: response.id,
    account_id: account.id,
    event_type: request.event_type,
    email: request.parsedEmail.normalized,
    email_domain: request.parsedEmail.domain,
    ip: request.parsedIp.address,
    user_id: request.user?.user_id ?? null,
    device_hash: request.device_intelligence?.device_hash ?? null,
    state: outcome.state,
    fraud_score: outcome.fraud_score,
    rule_set_version: outcome.rule_set_version ?? null,
    fired: outcome.fired,
    unknown: outcome.unavailable.filter((u) => u.startsWith('rule:')).map((u) => u.slice(5)),
    request: JSON.stringify({ ip: request.ip, email: request.email, event_type: request.event_type, user: request.user, device_intelligence: request.device_intelligence }),
    response: responseJson,
    shadow: shadow === null ? null : JSON.stringify(shadow),
  };
}
