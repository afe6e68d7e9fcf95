import type { Source } from '../source.js';

/** What User-Agent Client Hints report, high-entropy values included (Chromium only). */
export interface UserAgentData {
  [key: string]: string | boolean | string[][];
  brands: string[][];
  platform: string;
  platform_version: string;
  model: string;
  architecture: string;
  bitness: string;
  mobile: boolean;
}

interface HighEntropyValues {
  fullVersionList?: { brand: string; version: string }[];
  brands?: { brand: string; version: string }[];
  platform?: string;
  platformVersion?: string;
  model?: string;
  architecture?: string;
  bitness?: string;
  mobile?: boolean;
}

interface NavigatorUAData {
  getHighEntropyValues(hints: string[]): Promise<HighEntropyValues>;
}

/**
 * User-Agent Client Hints: the full browser versions, the OS version and, on Android, the device
 * model. A browser may refuse a hint (a permissions policy) or the whole call: left out then, and
 * the fields are read from the User-Agent string instead.
 */
export const userAgentData: Source<UserAgentData> = {
  name: 'user_agent_data',
  scope: 'browser',
  probe: async () => {
    const data = (navigator as Navigator & { userAgentData?: NavigatorUAData }).userAgentData;
    if (!data) return undefined;
    const values = await data.getHighEntropyValues(['platformVersion', 'model', 'architecture', 'bitness', 'fullVersionList']);
    return {
      brands: (values.fullVersionList ?? values.brands ?? []).map(({ brand, version }) => [brand, version]),
      platform: values.platform ?? '',
      platform_version: values.platformVersion ?? '',
      model: values.model ?? '',
      architecture: values.architecture ?? '',
      bitness: values.bitness ?? '',
      mobile: values.mobile ?? false,
    };
  },
};
