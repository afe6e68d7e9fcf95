import type { operations } from '../../api/schema';

/**
 * The Decisions page's filters, kept in the URL (`#/<account>/decisions/?state=decline&…`), so a
 * filtered view can be shared and the back button works. The names are the search route's.
 */
export type SearchQuery = NonNullable<operations['searchDecisions']['parameters']['query']>;
export const FILTERS = ['state', 'event_type', 'from', 'to', 'email', 'ip', 'user_id', 'device_hash', 'rule', 'label'] as const;
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

/** The search route's query: times from the form's local date-time to ISO instants. */
export function searchQuery(filters: Filters): SearchQuery {
  const query: Record<string, string> = {};
  for (const name of FILTERS) {
    const value = filters[name];
    if (!value) continue;
    query[name] = name === 'from' || name === 'to' ? localToIso(value) : value;
  }
  return query as SearchQuery;
}

/** `2026-11-23T10:00` (a datetime-local input, the browser's zone) as an ISO instant; anything else as typed, for the API to name. */
export function localToIso(value: string): string {
  const time = new Date(value);
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) && !Number.isNaN(time.getTime()) ? time.toISOString() : value;
}
