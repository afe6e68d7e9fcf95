import type { Source } from '../source.js';

/** Logical processors. */
export const hardwareConcurrency: Source = {
  name: 'hardware_concurrency',
  scope: 'device',
  probe: () => navigator.hardwareConcurrency,
};

/** Memory in GiB, rounded and capped by the browser (Chromium only; others leave it out). */
export const deviceMemory: Source = {
  name: 'device_memory',
  scope: 'device',
  probe: () => (navigator as Navigator & { deviceMemory?: number }).deviceMemory,
};
