import type { Source } from '../source.js';

/** The User-Agent string as the browser sends it. */
export const userAgent: Source = {
  name: 'user_agent',
  scope: 'browser',
  probe: () => navigator.userAgent,
};
