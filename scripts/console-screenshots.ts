import { mkdirSync } from 'node:fs';
import { buildConsoleIfStale } from './build-console.js';
import { createUser } from '../test/support/admin.js';
import { seedBacktest } from '../test/support/backtest-seed.js';
import { launchChromium } from '../test/support/browser.js';
import { logIn, openConsole, OWNER, startConsoleServer } from '../test/support/console.js';

/**
 * `npm run console:screenshots`: one 1280x800 screenshot of each console page into docs/console/,
 * taken in Debian's Chromium from the real service (a temporary SQLite store, loopback only),
 * as the README shows them.
 */
const OUT = new URL('../docs/console/', import.meta.url);
mkdirSync(OUT, { recursive: true });
await buildConsoleIfStale();
const server = await startConsoleServer();
await createUser(server.store, 'analyst@example.com', { roles: { acme: 'analyst' } });
const browser = await launchChromium();
try {
  const { context, page, troubles } = await openConsole(browser, server.origin);
  const shoot = async (name: string) => {
    await page.screenshot({ path: new URL(`${name}.png`, OUT).pathname });
    console.log(`docs/console/${name}.png`);
  };
  await shoot('login');
  await logIn(page, OWNER);
  await page.goto(`${server.origin}/console/#/acme/start`);
  await page.getByRole('button', { name: 'Generate a key' }).click();
  await page.getByRole('button', { name: 'Copy key' }).waitFor();
  await shoot('getting-started');
  for (const [route, heading, name] of [['users', 'Users', 'users'], ['sources', 'Data sources', 'data-sources'], ['audit', 'Audit log', 'audit-log']] as const) {
    await page.goto(`${server.origin}/console/#/acme/${route}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    // (Not waitForFunction: the console's CSP refuses the string evaluation it uses.)
    const loading = page.locator('main [role=status]', { hasText: /^Loading/ });
    while ((await loading.count()) > 0) await loading.first().waitFor({ state: 'detached' });
    await shoot(name);
  }
  // A finished backtest of a draft that adds a rule (the whole report: the page is taller than the window).
  await seedBacktest(server, OWNER);
  await page.goto(`${server.origin}/console/#/acme/rules/account_register/backtest`);
  await page.getByRole('region', { name: 'Start a backtest' }).getByLabel('Rules to test').locator('option', { hasText: 'draft' }).waitFor({ state: 'attached' });
  await page.getByRole('button', { name: 'Start backtest' }).click();
  await page.getByRole('status').filter({ hasText: 'Done' }).waitFor();
  await page.locator('.state-chart canvas').waitFor();
  await page.screenshot({ path: new URL('backtest.png', OUT).pathname, fullPage: true });
  console.log('docs/console/backtest.png');
  if (troubles.length > 0) throw new Error(`the pages met problems: ${troubles.join('; ')}`);
  await context.close();
} finally {
  await browser.close();
  await server.app.close();
}
