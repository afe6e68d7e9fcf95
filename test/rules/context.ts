import type { EmailFacts } from '../../src/email/facts.js';
import type { IpFacts } from '../../src/ip/facts.js';
import type { EvaluationContext } from '../../src/rules/ports.js';
import type { HistoryFacts } from '../../src/history/facts.js';
import type { ListFacts } from '../../src/lists/facts.js';
import { validateEvaluationRequest, type EvaluationRequestBody } from '../../src/request/evaluation-request.js';
import { ruleFileSchema } from '../../src/rules/file-schema.js';
import { compileRuleSet, type RuleSet } from '../../src/rules/rule-set.js';

/** A clean, fully known context: every check ran and found nothing. Tests override what they need. */
export interface ContextOverrides {
  body?: Partial<EvaluationRequestBody>;
  history?: HistoryFacts | null;
  lists?: ListFacts;
  email?: Partial<EmailFacts>;
  ip?: Partial<IpFacts>;
  unavailable?: string[];
}

export function contextOf({ body = {}, email = {}, ip = {}, unavailable = [], history = null, lists = { block: [], allow: [] } }: ContextOverrides = {}): EvaluationContext {
  const validated = validateEvaluationRequest({ ip: '81.2.69.160', email: 'jane.doe@example.com', event_type: 'account_register', ...body });
  if (!validated.ok) throw new Error(JSON.stringify(validated.errors));
  const request = validated.value;
  return {
    event_type: request.event_type,
    request,
    email: {
      address: request.email,
      normalized: request.parsedEmail.normalized,
      domain: request.parsedEmail.domain,
      canonical: request.parsedEmail.normalized,
      deliverable: true,
      deliverability: 'deliverable',
      mx_records: [{ exchange: `mx.${request.parsedEmail.domain}`, priority: 10 }],
      disposable: false,
      free_provider: false,
      role_account: false,
      relay: false,
      suggested_domain: null,
      ...email,
    },
    ip: {
      address: request.parsedIp.address,
      version: request.parsedIp.version,
      embedded_ipv4: request.parsedIp.embedded?.address ?? null,
      transition: request.parsedIp.embedded?.via ?? null,
      country_code: 'GB',
      country: 'United Kingdom',
      region: 'England',
      city: 'London',
      postal_code: 'EC1A',
      latitude: 51.5,
      longitude: -0.09,
      accuracy_radius_km: 20,
      time_zone: 'Europe/London',
      asn: 64501,
      as_organization: 'Example Networks',
      is_tor: false,
      is_proxy: false,
      is_datacenter: false,
      is_vpn: false,
      is_bogon: false,
      ...ip,
    },
    user: request.user ?? null,
    device_intelligence: request.device_intelligence ?? null,
    history,
    lists,
    unavailable: new Set(unavailable),
  };
}

/** A rule set from the same input a rule file holds, validated by the real schema. */
export function ruleSetOf(file: unknown): RuleSet {
  return compileRuleSet('test', 'test.yaml', ruleFileSchema.parse(file));
}
