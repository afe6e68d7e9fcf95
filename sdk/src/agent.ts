import type { UserAgentData } from './sources/user-agent-data.js';

/** The request fields that name the system and the browser. */
export interface AgentFields {
  device_os?: string;
  device_model?: string;
  browser_name?: string;
  browser_version?: string;
}

/** The longest text the service accepts in these fields (src/request/evaluation-request.ts). */
export const MAX_FIELD_LENGTH = 128;

/** Brands Chromium adds to keep sites from matching on the list (GREASE): "Not:A-Brand", ")Not;A=Brand". */
const GREASE = /not.a.brand/i;
const BRAND_NAMES: Record<string, string> = { 'Google Chrome': 'Chrome', 'Microsoft Edge': 'Edge' };

/**
 * The system and browser, from User-Agent Client Hints where the browser granted them (exact
 * versions, the Android model), else from the User-Agent string. A value that cannot be told is
 * left out rather than guessed.
 */
export function describeAgent(userAgent: string, hints?: UserAgentData): AgentFields {
  const parsed = parseUserAgent(userAgent);
  const fields: AgentFields = hints ? { ...parsed, ...fromHints(hints) } : parsed;
  // A browser that says it is headless in its User-Agent keeps saying so: the hints' brands do not.
  if (parsed.browser_name === 'HeadlessChrome') fields.browser_name = parsed.browser_name;
  for (const key of Object.keys(fields) as (keyof AgentFields)[]) {
    const value = fields[key]?.trim();
    if (value) fields[key] = value.slice(0, MAX_FIELD_LENGTH);
    else delete fields[key];
  }
  return fields;
}

function fromHints(hints: UserAgentData): AgentFields {
  const brands = hints.brands.filter(([brand]) => brand !== undefined && !GREASE.test(brand));
  // The browser's own brand rather than the engine's ("Microsoft Edge" over "Chromium").
  const [brand, version] = brands.find(([name]) => name !== 'Chromium') ?? brands[0] ?? [];
  const fields: AgentFields = {};
  if (brand) {
    fields.browser_name = BRAND_NAMES[brand] ?? brand;
    fields.browser_version = version;
  }
  if (hints.platform) fields.device_os = osFromHints(hints.platform, hints.platform_version);
  if (hints.model) fields.device_model = hints.model;
  return fields;
}

function osFromHints(platform: string, version: string): string {
  const major = Number.parseInt(version, 10);
  // Windows reports the UniversalApiContract version: 13 and above is Windows 11.
  // https://learn.microsoft.com/en-us/microsoft-edge/web-platform/how-to-detect-win11
  if (platform === 'Windows') return Number.isNaN(major) ? 'Windows' : major >= 13 ? 'Windows 11' : major > 0 ? 'Windows 10' : 'Windows 8.1 or older';
  const dotted = version.replace(/_/g, '.');
  return dotted ? `${platform} ${dotted}` : platform;
}

const WINDOWS: Record<string, string> = { '10.0': '10', '6.3': '8.1', '6.2': '8', '6.1': '7' };

/** The fields as far as the User-Agent string tells them (frozen to a few values by today's browsers). */
export function parseUserAgent(ua: string): AgentFields {
  const fields: AgentFields = {};
  let m: RegExpExecArray | null;
  if ((m = /Windows NT (\d+\.\d+)/.exec(ua))) fields.device_os = `Windows ${WINDOWS[m[1]!] ?? `NT ${m[1]}`}`;
  else if ((m = /(iPhone|iPad|iPod).*? OS (\d+(?:_\d+)*)/.exec(ua))) {
    fields.device_os = `iOS ${m[2]!.replace(/_/g, '.')}`;
    fields.device_model = m[1];
  } else if ((m = /Android (\d+(?:\.\d+)*)(?:; ([^;)]+))?/.exec(ua))) {
    fields.device_os = `Android ${m[1]}`;
    const model = m[2]?.replace(/ Build\/.*/, '').trim();
    // Reduced User-Agent strings say "K" for every model.
    if (model && model !== 'K' && !/^[a-z]{2}(-[a-z]{2})?$/i.test(model)) fields.device_model = model;
  } else if ((m = /Mac OS X (\d+(?:[_.]\d+)*)/.exec(ua))) fields.device_os = `macOS ${m[1]!.replace(/_/g, '.')}`;
  else if (/CrOS/.test(ua)) fields.device_os = 'ChromeOS';
  else if (/Linux/.test(ua)) fields.device_os = 'Linux';

  // The most specific token first: Edge and Opera also say Chrome, Chrome also says Safari.
  const browsers: [RegExp, string][] = [
    [/Edg(?:e|A|iOS)?\/([\d.]+)/, 'Edge'],
    [/(?:OPR|OPT)\/([\d.]+)/, 'Opera'],
    [/SamsungBrowser\/([\d.]+)/, 'Samsung Internet'],
    [/HeadlessChrome\/([\d.]+)/, 'HeadlessChrome'],
    [/(?:Chrome|CriOS)\/([\d.]+)/, 'Chrome'],
    [/(?:Firefox|FxiOS)\/([\d.]+)/, 'Firefox'],
    [/Version\/([\d.]+).*Safari\//, 'Safari'],
  ];
  for (const [pattern, name] of browsers) {
    if ((m = pattern.exec(ua))) {
      fields.browser_name = name;
      fields.browser_version = m[1];
      break;
    }
  }
  return fields;
}
