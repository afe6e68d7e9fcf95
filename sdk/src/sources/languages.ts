import type { Source } from '../source.js';

/** The user's preferred languages, in order, and the locale dates and numbers are formatted in. */
export const languages: Source = {
  name: 'languages',
  scope: 'browser',
  probe: () => ({ preferred: [...(navigator.languages ?? [navigator.language])], locale: Intl.DateTimeFormat().resolvedOptions().locale }),
};
