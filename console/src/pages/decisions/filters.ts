import type { operations } from '../../api/schema';

/**
 * The Decisions page's filters, kept in the URL (`#/<account>/decisions/?state=decline&…`), so a
 * filtered view can be shared and the back button works. The names are the search route's.
 */
export type SearchQuery = NonNullable<operations['searchDecisions']['parameters']['query']>;
export const FILTERS = ['state', 'event_type', 'from', 'to', 'email', 'domain', 'ip', 'user_id', 'device_hash', 'rule', 'label'] as const;
export type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

export function parseFilters(segment: string | undefined): Filters {
  const params = new URLSearchParams(segment?.startsWith('?') ? segment.slice(1) : '');
  const filters: Filters = {};
  for (const name of FILTERS) {
    const value = params.get(name);
    if (value) filters[name] = value;
  }
  return filters;
}

/** The route segment for `filters` ('' when none). */
export function filterSegment(filters: Filters): string {
  const params = new URLSearchParams();
  for (const name of FILTERS) if (filters[name]) params.set(name, filters[name]!);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The search route's query (times are instants in the URL already). */
export function searchQuery(filters: Filters): SearchQuery {
  const query: Record<string, string> = {};
  for (const name of FILTERS) if (filters[name]) query[name] = filters[name]!;
  return query as SearchQuery;
}
