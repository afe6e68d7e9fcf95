import { describe, expect, it } from 'vitest';
import { describeAgent, MAX_FIELD_LENGTH, parseUserAgent } from '../../sdk/src/agent.js';
import type { UserAgentData } from '../../sdk/src/sources/user-agent-data.js';
import { MAX_DEVICE_TEXT } from '../../src/request/evaluation-request.js';

const hints = (overrides: Partial<UserAgentData>): UserAgentData => ({
  brands: [['Not)A;Brand', '8.0.0.0'], ['Chromium', '131.0.6778.86'], ['Google Chrome', '131.0.6778.86']],
  platform: 'Windows',
  platform_version: '15.0.0',
  model: '',
  architecture: 'x86',
  bitness: '64',
  mobile: false,
  ...overrides,
});

describe('fields from the User-Agent string', () => {
  it.each([
    ['Chrome on Windows', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', { device_os: 'Windows 10', browser_name: 'Chrome', browser_version: '131.0.0.0' }],
    ['Edge on Windows', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86', { device_os: 'Windows 10', browser_name: 'Edge', browser_version: '131.0.2903.86' }],
    ['Safari on macOS', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15', { device_os: 'macOS 10.15.7', browser_name: 'Safari', browser_version: '17.4.1' }],
    ['Safari on an iPhone', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1', { device_os: 'iOS 17.4', device_model: 'iPhone', browser_name: 'Safari', browser_version: '17.4' }],
    ['Chrome on an iPad', 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0.6099.119 Mobile/15E148 Safari/604.1', { device_os: 'iOS 16.6', device_model: 'iPad', browser_name: 'Chrome', browser_version: '120.0.6099.119' }],
    ['reduced Chrome on Android (model "K")', 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', { device_os: 'Android 10', browser_name: 'Chrome', browser_version: '131.0.0.0' }],
    ['Samsung Internet with its model', 'Mozilla/5.0 (Linux; Android 9; SM-G960F Build/PPR1.180610.011) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/9.2 Chrome/67.0.3396.87 Mobile Safari/537.36', { device_os: 'Android 9', device_model: 'SM-G960F', browser_name: 'Samsung Internet', browser_version: '9.2' }],
    ['Firefox on Linux', 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', { device_os: 'Linux', browser_name: 'Firefox', browser_version: '133.0' }],
    ['headless Chromium', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36', { device_os: 'Linux', browser_name: 'HeadlessChrome', browser_version: '156.0.0.0' }],
    ['something unknown', 'curl/8.5.0', {}],
  ])('%s', (_name, ua, expected) => {
    expect(describeAgent(ua)).toEqual(expected);
    expect(parseUserAgent(ua)).toEqual(expected);
  });
});

describe('fields from User-Agent Client Hints', () => {
  const chromeOnWindows = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

  it('take the exact version, the browser’s own brand and Windows 11 from the platform version', () => {
    expect(describeAgent(chromeOnWindows, hints({}))).toEqual({ device_os: 'Windows 11', browser_name: 'Chrome', browser_version: '131.0.6778.86' });
    expect(describeAgent(chromeOnWindows, hints({ platform_version: '10.0.0' })).device_os).toBe('Windows 10');
  });

  it('name Edge over Chromium, ignore GREASE brands, fall back to Chromium', () => {
    expect(describeAgent(chromeOnWindows, hints({ brands: [['Chromium', '131.0.6778.86'], ['Microsoft Edge', '131.0.2903.86'], ['Not_A Brand', '24.0.0.0']] })).browser_name).toBe('Edge');
    expect(describeAgent(chromeOnWindows, hints({ brands: [[' Not;A Brand', '99'], ['Chromium', '131.0.6778.86']] }))).toMatchObject({ browser_name: 'Chromium', browser_version: '131.0.6778.86' });
  });

  it('give the Android model and version', () => {
    const ua = 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';
    expect(describeAgent(ua, hints({ platform: 'Android', platform_version: '14.0.0', model: 'Pixel 8', mobile: true }))).toEqual({
      device_os: 'Android 14.0.0',
      device_model: 'Pixel 8',
      browser_name: 'Chrome',
      browser_version: '131.0.6778.86',
    });
  });

  it('keep a self-declared headless browser headless', () => {
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36';
    expect(describeAgent(ua, hints({ brands: [['Chromium', '156.0.8078.79']], platform: 'Linux', platform_version: '' }))).toEqual({
      device_os: 'Linux',
      browser_name: 'HeadlessChrome',
      browser_version: '156.0.8078.79',
    });
  });

  it('fill what the hints leave empty from the string, and cut every field to what the service accepts', () => {
    expect(MAX_FIELD_LENGTH).toBe(MAX_DEVICE_TEXT);
    const long = describeAgent(chromeOnWindows, hints({ brands: [['B'.repeat(300), '1']], platform: '', model: 'M'.repeat(300) }));
    expect(long).toEqual({ device_os: 'Windows 10', device_model: 'M'.repeat(128), browser_name: 'B'.repeat(128), browser_version: '1' });
  });
});
