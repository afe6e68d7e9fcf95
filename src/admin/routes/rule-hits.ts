import { z } from 'zod';
import { problems } from '../../http/problem.js';
import { adminRoute } from '../route.js';
import { eventType, eventTypeParams, contentOf } from '../rule-views.js';
import { iso } from '../schemas.js';

/**
 * Hit rates of the live version's rules (issue 28): of the evaluations of an event type logged in
 * the last 24 hours and 7 days, how many each rule fired on (live or dry-run) and how many it could
 * not decide (an input unknown). Read from the hourly rollups the log writer keeps (migration 13),
 * so a page view sums at most 168 rows per rule; a window starts at the top of its first hour.
 */
const WINDOWS = [{ name: '24h', hours: 24 }, { name: '7d', hours: 24 * 7 }] as const;
const HOUR_MS = 3_600_000;

const share = z.number().nullable().meta({ description: 'Out of the window\'s evaluations (0 to 1); null when there were none' });

export const getRuleHitRates = adminRoute({
  method: 'GET', url: '/accounts/:account/rule-sets/:event_type/hit-rates', tag: 'rules', operationId: 'getRuleHitRates',
  summary: 'How often each rule of the live version fired and was unknown over the last 24 hours and 7 days',
  description: 'Counted from the evaluation log as it is written, by the hour: a window is its hours, the current one so far included. Evaluations the log did not keep (RETENTION_DAYS 0, a dropped batch) are not counted; evaluations decided by an earlier version in the window are.',
  access: { role: 'analyst', account: true },
  params: eventTypeParams,
  success: {
    status: 200, description: 'One entry per window; the live version\'s rules in its order',
    schema: z.object({
      event_type: eventType,
      version: z.number().int().meta({ description: 'The live version whose rules are listed' }),
      windows: z.array(z.object({
        window: z.enum(WINDOWS.map((w) => w.name) as ['24h', '7d']),
        since: z.string().meta({ description: 'The first hour counted' }),
        evaluations: z.number().int(),
        rules: z.array(z.object({ rule_id: z.string(), fired: z.number().int(), unknown: z.number().int(), fired_share: share, unknown_share: share })),
      })),
    }),
    example: {
      event_type: 'account_register', version: 3,
      windows: [{ window: '24h', since: '2026-11-20T13:00:00.000Z', evaluations: 1200, rules: [{ rule_id: 'ip_tor', fired: 12, unknown: 0, fired_share: 0.01, unknown_share: 0 }] }],
    },
  },
  handler: async ({ account, params, services, now }) => {
    const live = await services.store.ruleSets.inStatus(account.id, params.event_type, 'published');
    if (!live) throw problems.resourceNotFound(`${params.event_type} has no live version`);
    const ids = contentOf(account.id, live.event_type, live.yaml, live.version).rules.map((r) => r.id);
    const windows = await Promise.all(WINDOWS.map(async ({ name, hours }) => {
      const since = now - (now % HOUR_MS) - (hours - 1) * HOUR_MS;
      const counts = await services.store.ruleHits.since(account.id, params.event_type, since);
      const of = (n: number) => (counts.evaluations === 0 ? null : n / counts.evaluations);
      return {
        window: name, since: iso(since), evaluations: counts.evaluations,
        rules: ids.map((id) => {
          const { fired, unknown } = counts.rules.get(id) ?? { fired: 0, unknown: 0 };
          return { rule_id: id, fired, unknown, fired_share: of(fired), unknown_share: of(unknown) };
        }),
      };
    }));
    return { event_type: params.event_type, version: live.version, windows };
  },
});

export const ruleHitRoutes = [getRuleHitRates];
