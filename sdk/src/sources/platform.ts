import type { Source } from '../source.js';

/** The operating system and processor as `navigator.platform` names them ("Win32", "MacIntel"). */
export const platform: Source = {
  name: 'platform',
  scope: 'device',
  probe: () => navigator.platform,
};
