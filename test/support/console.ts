import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { createUser, login, PASSWORD, type Session } from './admin.js';
import { startTestApp } from './app.js';
import { launchChromium, recordRequests } from './browser.js';
import { cityDatabase, cityRecord } from './mmdb.js';

/**
 * The real service (production factory, SQLite in a temporary directory) on a real loopback port,
 * for the browser tests of the web console: an owner, and an account `acme` made through the admin
 * API as the console would.
 */
export interface ConsoleServer {
  app: FastifyInstance;
  store: Store;
  origin: string;
}

export const OWNER = 'owner@console.test';

/** A test clicks through several pages, each logging in (a scrypt hash): generous on a loaded 2-core runner. */
export const BROWSER_TEST_TIMEOUT_MS = 60_000;

/** `env`: more settings for the app (RULES_DIR, webhooks to a loopback receiver, OIDC_*); `port`: a fixed one (an OIDC redirect URL names it). */
export async function startConsoleServer(options: { env?: Record<string, string>; port?: number } = {}): Promise<ConsoleServer> {
  // A City database (a real .mmdb) that places 81.2.69.0/24 in London: a decision's page shows its position.
  const dataDir = mkdtempSync(join(tmpdir(), 'risk-data-'));
  writeFileSync(join(dataDir, 'GeoLite2-City.mmdb'), cityDatabase(6, [{
    network: '81.2.69.0/24',
    data: cityRecord({ countryCode: 'GB', country: 'United Kingdom', city: 'London', latitude: 51.5142, longitude: -0.0931, accuracyRadius: 20, timeZone: 'Europe/London' }),
  }]));
  const { app } = await startTestApp({ DATA_DIR: dataDir, ...options.env });
  await createUser(app.store, OWNER, { owner: true });
  const session = await login(app, OWNER);
  const made = await app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: session.write, payload: { id: 'acme', name: 'Acme Ltd' } });
  expect(made.statusCode, made.body).toBe(201);
  await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  return { app, store: app.store, origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

/** What a test file of console pages works with; its fields are set once the file's tests start. */
export interface ConsoleFixture {
  server: ConsoleServer;
  browser: Browser;
  /** An instance owner's session on `server`, for set-up through the admin API. */
  owner: Session;
}

/**
 * A console server, an owner's session and Chromium for the test file that calls it: started
 * before its tests, closed after them. Read the fields inside tests and hooks, not at import.
 */
export function useConsoleInChromium(options: Parameters<typeof startConsoleServer>[0] = {}): ConsoleFixture {
  const fixture = {} as ConsoleFixture;
  beforeAll(async () => {
    fixture.server = await startConsoleServer(options);
    fixture.owner = await login(fixture.server.app, OWNER);
    fixture.browser = await launchChromium();
  });
  afterAll(async () => {
    await fixture.browser?.close();
    await fixture.server?.app.close();
  });
  return fixture;
}

/** Opens the account `acme`'s rule set of an event type on the Threat rules page, once its heading shows. */
export async function openRuleSet(page: Page, origin: string, eventType: string): Promise<void> {
  await page.goto(`${origin}/console/#/acme/rules/${eventType}`);
  await page.getByRole('heading', { level: 1, name: `Threat rules: ${eventType}` }).waitFor();
}

/** Account acme's Data sources page, from the console's navigation (the page is signed in). */
export async function openDataSources(page: Page): Promise<void> {
  await page.getByLabel('Account').selectOption('acme');
  await page.getByRole('link', { name: 'Data sources' }).click();
  await page.getByRole('heading', { name: 'Data sources' }).waitFor();
}

/** A page in a fresh profile, with every problem the page meets recorded: a test asserts there were none. */
export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Requests the page made (anything off loopback is refused). */
  requests: string[];
  /** Uncaught errors, console errors (a CSP refusal is one) and alert/confirm dialogs. */
  troubles: string[];
}

export async function openConsole(browser: Browser, origin: string): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const requests = await recordRequests(context);
  const page = await context.newPage();
  const troubles: string[] = [];
  page.on('pageerror', (error) => troubles.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    // An answer of 401 or 404 is logged by Chromium as a failed resource: the app handles those.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) troubles.push(`console: ${message.text()}`);
  });
  page.on('dialog', (dialog) => {
    troubles.push(`dialog: ${dialog.type()} ${dialog.message()}`);
    void dialog.dismiss();
  });
  await page.goto(`${origin}/console/`);
  return { context, page, requests, troubles };
}

export async function logIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}
