import type { Source } from '../source.js';

/** Touch support: how many touch points the screen takes (0 without a touch screen). */
export const touch: Source = {
  name: 'touch',
  scope: 'device',
  probe: () => navigator.maxTouchPoints,
};
