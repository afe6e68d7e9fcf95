/** A value a signal can take: plain JSON, so it hashes the same way everywhere. */
export type SignalValue = string | number | boolean | null | SignalValue[] | { [key: string]: SignalValue };

/**
 * One signal of the device or the browser. `probe` returns its value, or undefined where the
 * browser does not have it; it may throw or never settle: the loop leaves such a signal out.
 *
 * - `device`: the same in every browser on one device (hardware, display, system settings); it
 *   feeds `device_hash` and `browser_hash`.
 * - `browser`: this browser on this device (rendering, audio stack, fonts it sees, languages,
 *   user agent); it feeds `browser_hash` only.
 */
export interface Source<T extends SignalValue = SignalValue> {
  name: string;
  scope: 'device' | 'browser';
  probe(): T | undefined | Promise<T | undefined>;
}

/** What came back within the budget, by source name. */
export type Signals = Record<string, SignalValue>;
