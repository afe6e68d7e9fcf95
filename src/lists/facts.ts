import { z } from 'zod';

/** What an evaluation's request matched on the account's lists (PRODUCT.md "Lists"), as rules read it and the response shows it. */
export const LIST_KINDS = ['email', 'domain', 'ip', 'device', 'user'] as const;
export type ListKind = (typeof LIST_KINDS)[number];
export const LIST_NAMES = ['block', 'allow'] as const;
export type ListName = (typeof LIST_NAMES)[number];

const matchSchema = z.object({
  id: z.number().int().meta({ description: 'The entry\'s id (`npm run lists -- list`).' }),
  kind: z.enum(LIST_KINDS),
  value: z.string().meta({ description: 'The entry as listed: an address, a domain, an IP or CIDR range, a device hash or a user id.' }),
  reason: z.string(),
});

export const listFactsSchema = z.object({
  block: z.array(matchSchema).meta({ description: 'Block-list entries this event matched (an IPv6 address carrying an IPv4 one is checked as both).' }),
  allow: z.array(matchSchema).meta({ description: 'Allow-list entries this event matched.' }),
}).meta({ description: 'The account\'s lists, as they stood in memory (refreshed within RELOAD_INTERVAL_MS of a change). Expired entries never match.' });

export type ListFacts = z.infer<typeof listFactsSchema>;
export type ListMatch = z.infer<typeof matchSchema>;
export const NO_LIST_MATCHES: ListFacts = Object.freeze({ block: [], allow: [] }) as ListFacts;
