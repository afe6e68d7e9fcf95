import type { Source } from '../source.js';

/** The system's IANA time zone ("Europe/London"): it changes when the device travels. */
export const timeZone: Source = {
  name: 'time_zone',
  scope: 'device',
  probe: () => Intl.DateTimeFormat().resolvedOptions().timeZone,
};
