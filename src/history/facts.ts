import { z } from 'zod';

/**
 * The `history` object (PRODUCT.md "Behaviour: what the service remembers"): what came before this
 * event, per account, with this event counted. Written once, as zod: it types the code, documents
 * the response in the OpenAPI document, and rules read it by the same names (`history.ip.events_1h`).
 */
const count = (description: string) => z.number().int().min(0).meta({ description });
const iso = (description: string) => z.iso.datetime().meta({ description });

const previousSchema = z.object({
  at: iso('When the user\'s previous event was.'),
  country_code: z.string().nullable().meta({ description: 'Its country; `null` when unknown.' }),
  distance_km: z.number().nullable().meta({
    description: 'Great-circle distance from there to here, less both positions\' accuracy radii (never below 0); `null` when either position is unknown.',
  }),
  speed_kmh: z.number().nullable().meta({ description: 'distance_km over the time between the events (at least one minute); `null` when either position is unknown.' }),
  same_network: z.boolean().nullable().meta({ description: 'Both events from the same autonomous system and country (a mobile network re-routing, not travel); `null` when either is unknown.' }),
  anonymous: z.boolean().nullable().meta({
    description: 'Either event came from a known VPN, proxy, Tor exit or hosting network: its position is the network\'s, not the person\'s. `null` when neither is known to, and a flag of either is unknown (its source not loaded or not answering).',
  }),
});

export const historyFactsSchema = z.object({
  ip: z.object({
    events_1h: count('Evaluations from this IP address in the last hour (60 one-minute buckets).'),
    events_24h: count('In the last 24 hours (24 one-hour buckets).'),
    accounts_24h: count('Distinct accounts (user ids, else canonical e-mail addresses) from this address in the last 24 hours; `null` when `partial`.').nullable(),
  }),
  email: z.object({
    events_24h: count('Evaluations of this canonical e-mail address in the last 24 hours.'),
    devices_30d: count('Distinct devices seen with it in the last 30 days; `null` when `partial`.').nullable(),
    first_seen: iso('Its first evaluation within HISTORY_DAYS; `null` when `partial`.').nullable(),
  }),
  device: z.object({
    events_1h: count('Evaluations from this device in the last hour.'),
    accounts_30d: count('Distinct accounts behind this device in the last 30 days; `null` when `partial`.').nullable(),
    first_seen: iso('Its first evaluation within HISTORY_DAYS; `null` when `partial`.').nullable(),
  }).nullable().meta({ description: '`null` when `device_intelligence.device_hash` was not sent.' }),
  user: z.object({
    first_seen: iso('The user\'s first evaluation within HISTORY_DAYS.'),
    new_device: z.boolean().nullable().meta({ description: 'This device was never seen with this user before; `null` without a device, or while the user has no device on record within HISTORY_DAYS (the first event, or earlier events sent no device hash: nothing to compare with).' }),
    new_country: z.boolean().nullable().meta({ description: 'This country was never seen with this user before; `null` when the country is unknown, or while the user has no country on record within HISTORY_DAYS.' }),
    devices_30d: count('Distinct devices of this user in the last 30 days.'),
    countries_24h: count('Distinct countries of this user in the last 24 hours.'),
    previous: previousSchema.nullable().meta({ description: 'The user\'s previous event; `null` on the first.' }),
  }).nullable().meta({ description: '`null` when `user.user_id` was not sent, or when `partial` (the user\'s facts are then unknown).' }),
  velocity: z.record(z.string(), z.number().int().min(0).nullable()).optional().meta({
    description: 'The velocity counters the event type\'s rule file defines (docs/rules.md "Velocity counters"), by name, this event counted when the counter counts its event type; `null` when the request does not carry the counter\'s key, and every one `null` (unknown) when `partial`. Absent when the file defines none.',
    example: { signups_per_domain_1h: 3 },
  }),
  at_least: z.array(z.string()).meta({
    description: 'Counts that reached the cap of a distinct set (100): their value is a lower bound, e.g. `["ip.accounts_24h"]`. When `partial`, every event count is named here too. Rules read them so: `gte`/`gt` the bound already meets is true, any other comparison unknown.',
  }),
  partial: z.boolean().meta({
    description: '`true` when the store could not answer (`store` is then in `unavailable`: too slow, down, refusing, or this key past its statements in flight) and the event counts are this replica\'s own (README "Behaviour history"): lower bounds, each named in `at_least`; what only the store knows (distinct counts, first seen, the user\'s facts, velocity counters) is `null`.',
  }),
}).meta({ description: 'What the service remembers of earlier events (this one counted). `partial` when the store did not answer (`store` is then in `unavailable`); `null` when history is off (HISTORY_DAYS=0).' });

export type HistoryFacts = z.infer<typeof historyFactsSchema>;
export type PreviousEvent = z.infer<typeof previousSchema>;
