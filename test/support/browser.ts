import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it). Never a downloaded browser. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Headless Chromium with a fresh profile, kept off the network: no background requests of its own
 * (the machine has no network, and the tests assert on every request a page makes).
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-quic',
      '--no-first-run',
      '--disable-sync',
    ],
  });
}

/** Every URL the context's pages request, and a refusal of any that is not on loopback. */
export async function recordRequests(context: BrowserContext): Promise<string[]> {
  const urls: string[] = [];
  context.on('request', (request) => urls.push(request.url()));
  await context.route(
    (url) => !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname),
    (route) => route.abort('blockedbyclient'),
  );
  return urls;
}
