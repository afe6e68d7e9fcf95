import type { EvaluationContext } from '../src/rules/ports.js';
import { validateEvaluationRequest } from '../src/request/evaluation-request.js';

/**
 * An enriched context as the evaluator hands it to the rules (e-mail and IP facts of a clean
 * request unless overridden), for the engine's benchmarks (rules.ts, shadow.ts). `body` is merged
 * into a request (event type `bench` unless it says otherwise).
 */
export function context(body: object, overrides: { ip?: object; email?: object; unavailable?: string[] } = {}): EvaluationContext {
  const validated = validateEvaluationRequest({ ip: '81.2.69.160', email: 'jane.doe@example.com', event_type: 'bench', ...body });
  if (!validated.ok) throw new Error(JSON.stringify(validated.errors));
  const r = validated.value;
  return {
    event_type: r.event_type,
    request: r,
    email: {
      address: r.email, normalized: r.parsedEmail.normalized, domain: r.parsedEmail.domain, canonical: r.parsedEmail.normalized,
      deliverable: true, deliverability: 'deliverable', mx_records: [], disposable: false, free_provider: true, role_account: false,
      relay: false, suggested_domain: null, ...overrides.email,
    },
    ip: {
      address: r.parsedIp.address, version: r.parsedIp.version,
      embedded_ipv4: r.parsedIp.embedded?.address ?? null, transition: r.parsedIp.embedded?.via ?? null, country_code: 'GB', country: 'United Kingdom', region: 'England',
      city: 'London', postal_code: 'EC1A', latitude: 51.5, longitude: -0.09, accuracy_radius_km: 20, time_zone: 'Europe/London',
      asn: 64501, as_organization: 'Example', is_tor: false, is_proxy: false, is_datacenter: false, is_vpn: false, is_bogon: false,
      ...overrides.ip,
    },
    user: r.user ?? null,
    device_intelligence: r.device_intelligence ?? null,
    history: null,
    lists: { block: [], allow: [] },
    unavailable: new Set(overrides.unavailable ?? []),
  };
}
