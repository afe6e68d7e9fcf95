import { z } from 'zod';
import { normalizeDomain } from '../../email/address.js';
import { problems } from '../../http/problem.js';
import { normaliseListValue } from '../../lists/entry.js';
import { LIST_KINDS, LIST_NAMES } from '../../lists/facts.js';
import { ipKeyRange } from '../../store/decisions.js';
import { ENTITY_KINDS, ENTITY_SCAN, MAX_LINKS, type EntityKind } from '../../store/entities.js';
import { adminRoute } from '../route.js';
import { accountParams, iso, isoOrNull, time } from '../schemas.js';

/**
 * Entities (issue 27, PRODUCT.md "Review"): an e-mail address, domain, IP address, device or user as
 * the account's evaluation log knows it, for the console's entity pages. Its evaluations are the
 * decision search with one filter (`GET …/decisions?ip=…`); this answers the rest: first and last
 * seen, counts, labels, list entries and what it is linked to (src/store/entities.ts). And the
 * account's people by e-mail address, so the console names an assignee instead of `user:usr_…`.
 */

/** The value as the log stores it (the key) and as a list entry holds it, or a field error. */
function keysOf(kind: EntityKind, value: string): { key: string; listValue: string } {
  const listed = normaliseListValue(kind, value);
  if ('error' in listed) throw problems.invalidQuery([{ path: 'value', message: listed.error }]);
  if (kind === 'ip') {
    const range = ipKeyRange(value.trim());
    if (range === null || range.start !== range.end) throw problems.invalidQuery([{ path: 'value', message: 'one IP address, not a range (search decisions for a range)' }]);
    return { key: range.start, listValue: listed.value };
  }
  if (kind === 'domain') return { key: normalizeDomain(value.trim()) ?? listed.value, listValue: listed.value };
  return { key: listed.value, listValue: listed.value };
}

const listEntry = z.object({
  id: z.number().int(), list: z.enum(LIST_NAMES), kind: z.enum(LIST_KINDS), value: z.string(), reason: z.string(), author: z.string(),
  created_at: time, expires_at: time.nullable(),
});
const strings = (what: string) => z.array(z.string()).describe(`${what}, most recent first (at most ${MAX_LINKS})`);

const entity = z.object({
  kind: z.enum(ENTITY_KINDS),
  value: z.string().describe('Normalised as the log stores it (an IP address in canonical text)'),
  first_seen: time.nullable().describe('Its oldest evaluation still in the log (kept RETENTION_DAYS); null when none'),
  last_seen: time.nullable(),
  scanned: z.number().int().describe(`How many of its latest evaluations the counts and links were read from (at most ${ENTITY_SCAN})`),
  states: z.object({ approve: z.number().int(), review: z.number().int(), decline: z.number().int() }),
  labels: z.object({ fraud: z.number().int(), legit: z.number().int() }),
  linked: z.object({
    emails: strings('E-mail addresses evaluated with it'),
    domains: strings('E-mail domains'),
    ips: strings('IP addresses'),
    devices: strings('Device hashes'),
    users: strings('User ids'),
    countries: strings('Countries (ISO codes) its IP addresses were placed in'),
  }),
  list_entries: z.array(listEntry).describe('Block and allow list entries with exactly this value (expired ones too)'),
});

export const getEntity = adminRoute({
  method: 'GET', url: '/accounts/:account/entities/:kind', tag: 'decisions', operationId: 'getEntity',
  summary: 'An e-mail address, domain, IP address, device or user: first and last seen, counts, labels, list entries, what it is linked to',
  description: `Read from the evaluation log's index on that value: its two ends (first and last seen) and its latest ${ENTITY_SCAN} evaluations (counts and links), `
    + 'so the cost does not grow with how often it was seen. Its evaluations are `GET …/decisions` with the matching filter. '
    + 'Links come from the log, which keeps the values as evaluated; behaviour history keeps only keyed hashes, which cannot be shown.',
  access: { role: 'analyst', account: true },
  params: accountParams.extend({ kind: z.enum(ENTITY_KINDS) }),
  query: z.object({ value: z.string().min(1).max(320).describe('The address, domain, IP address, device hash or user id').meta({ example: '203.0.113.7' }) }),
  success: {
    status: 200, description: 'What the log knows of it (zeros and nulls when nothing)', schema: entity,
    example: {
      kind: 'ip', value: '203.0.113.7', first_seen: '2026-11-20T08:00:00.000Z', last_seen: '2026-11-21T12:00:00.000Z', scanned: 14,
      states: { approve: 9, review: 3, decline: 2 }, labels: { fraud: 1, legit: 0 },
      linked: { emails: ['jane.doe@example.com'], domains: ['example.com'], ips: [], devices: ['ab'.repeat(32)], users: ['usr_981'], countries: ['GB'] },
      list_entries: [],
    },
  },
  handler: async ({ account, params, query, services }) => {
    const { key, listValue } = keysOf(params.kind, query.value);
    const found = await services.store.entities.overview(account.id, params.kind, key, listValue);
    return {
      kind: params.kind, value: params.kind === 'ip' ? listValue : key,
      first_seen: isoOrNull(found.first_seen), last_seen: isoOrNull(found.last_seen), scanned: found.scanned,
      states: found.states, labels: found.labels, linked: found.links,
      list_entries: found.list_entries.map((e) => ({
        id: e.id, list: e.list, kind: e.kind, value: e.value, reason: e.reason, author: e.author,
        created_at: iso(Number(e.created_at)), expires_at: isoOrNull(e.expires_at === null ? null : Number(e.expires_at)),
      })),
    };
  },
});

export const listPeople = adminRoute({
  method: 'GET', url: '/accounts/:account/people', tag: 'decisions', operationId: 'listPeople',
  summary: 'Who may act on the account, by name: for showing `user:…` and `token:…` actors',
  description: 'The account\'s members by e-mail address and its admin tokens by name, for its analysts too (who cannot list members). Roles are not included.',
  access: { role: 'analyst', account: true },
  params: accountParams,
  success: {
    status: 200, description: 'Each actor id with its name',
    schema: z.object({ people: z.array(z.object({ actor: z.string().describe('`user:<id>` or `token:<id>`'), name: z.string().describe('An e-mail address, or a token\'s name') })) }),
    example: { people: [{ actor: 'user:usr_4f1c2a9b7d3e8f60', name: 'jane@acme.example' }, { actor: 'token:tok_0a1b2c3d', name: 'back office' }] },
  },
  handler: async ({ account, services }) => {
    const [users, tokens] = await Promise.all([services.store.users.list(account.id), services.store.adminTokens.list(account.id)]);
    return { people: [...users.map((u) => ({ actor: `user:${u.id}`, name: u.email })), ...tokens.map((t) => ({ actor: `token:${t.id}`, name: t.name }))] };
  },
});

export const entityRoutes = [getEntity, listPeople];
