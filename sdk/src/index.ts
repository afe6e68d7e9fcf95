import { describeAgent } from './agent.js';
import { canonicalJson } from './canonical.js';
import { runSources } from './run-sources.js';
import { sha256Hex } from './sha256.js';
import type { Signals, Source } from './source.js';
import { SOURCES } from './sources/index.js';
import type { UserAgentData } from './sources/user-agent-data.js';

/** The request's `device_intelligence` object (spec §2.1). A field the browser could not tell is absent. */
export interface DeviceIntelligence {
  /** SHA-256 of the device signals: 64 lower-case hexadecimal characters. */
  device_hash?: string;
  device_os?: string;
  device_model?: string;
  /** SHA-256 of the device and browser signals: 64 lower-case hexadecimal characters. */
  browser_hash?: string;
  browser_name?: string;
  browser_version?: string;
  cookie_enabled?: boolean;
}

export interface CollectOptions {
  /** How long the signals may take, in milliseconds (default 500): a signal still running then is left out. */
  timeoutMs?: number;
}

/** This build's version (sdk/package.json), set by the build. */
declare const __SDK_VERSION__: string;
export const version: string = __SDK_VERSION__;
export const DEFAULT_TIMEOUT_MS = 500;

/** Part of every digest's input: a change to what is hashed changes this, and with it every hash. */
const HASH_FORMAT = 'risk-device/1';

/**
 * Collects the device intelligence of this browser. Sends nothing anywhere: post the result to your
 * own backend, which adds it to the evaluation. Never rejects; resolves within the time budget.
 */
export async function collect(options: CollectOptions = {}): Promise<DeviceIntelligence> {
  try {
    if (typeof window === 'undefined' || typeof navigator === 'undefined') return {};
    const signals = await runSources(SOURCES, budget(options?.timeoutMs));
    const agent = describeAgent(String(navigator.userAgent), signals.user_agent_data as UserAgentData | undefined);
    // The spec's field order, for people reading the object; a field not known is then dropped.
    const result: DeviceIntelligence = {
      device_hash: digest(signals, SOURCES.filter((source) => source.scope === 'device')),
      device_os: agent.device_os,
      device_model: agent.device_model,
      browser_hash: digest(signals, SOURCES),
      browser_name: agent.browser_name,
      browser_version: agent.browser_version,
      cookie_enabled: typeof navigator.cookieEnabled === 'boolean' ? navigator.cookieEnabled : undefined,
    };
    for (const key of Object.keys(result) as (keyof DeviceIntelligence)[]) if (result[key] === undefined) delete result[key];
    return result;
  } catch {
    return {};
  }
}

function budget(timeoutMs: unknown): number {
  return typeof timeoutMs === 'number' && timeoutMs >= 0 && timeoutMs <= 60_000 ? timeoutMs : DEFAULT_TIMEOUT_MS;
}

/** The digest of the named sources' values; none when none of them came back (that would be everyone's). */
function digest(signals: Signals, sources: readonly Source[]): string | undefined {
  const values: Signals = {};
  for (const { name } of sources) if (name in signals) values[name] = signals[name]!;
  return Object.keys(values).length > 0 ? sha256Hex(`${HASH_FORMAT}\n${canonicalJson(values)}`) : undefined;
}
