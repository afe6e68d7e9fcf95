import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { HistoryFacts } from '../../src/history/facts.js';
import { bearer, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { expectEvaluation } from '../support/contract.js';
import { anonymousIpDatabase, anonymousIpRecord, asnDatabase, asnRecord, cityDatabase, cityRecord } from '../support/mmdb.js';

/**
 * Places for the behaviour scenarios, in real .mmdb files: London and Manchester on one network,
 * Sydney on another, and a VPN exit in Sydney. Times come from a clock the test moves.
 */
export const PLACES = {
  london: '81.2.69.160',
  manchester: '81.2.70.10',
  sydney: '1.128.0.1',
  sydneyVpn: '1.129.0.1',
  /** In no database: nothing is known of where it is. */
  nowhere: '192.0.2.44',
} as const;

export function behaviourDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'risk-behaviour-data-'));
  writeFileSync(join(dir, 'GeoLite2-City.mmdb'), cityDatabase(6, [
    { network: '81.2.69.0/24', data: cityRecord({ countryCode: 'GB', country: 'United Kingdom', city: 'London', latitude: 51.5142, longitude: -0.0931, accuracyRadius: 10 }) },
    { network: '81.2.70.0/24', data: cityRecord({ countryCode: 'GB', country: 'United Kingdom', city: 'Manchester', latitude: 53.48, longitude: -2.24, accuracyRadius: 20 }) },
    { network: '1.128.0.0/16', data: cityRecord({ countryCode: 'AU', country: 'Australia', continentCode: 'OC', city: 'Sydney', latitude: -33.87, longitude: 151.21, accuracyRadius: 20 }) },
    { network: '1.129.0.0/16', data: cityRecord({ countryCode: 'AU', country: 'Australia', continentCode: 'OC', city: 'Sydney', latitude: -33.87, longitude: 151.21, accuracyRadius: 20 }) },
  ]));
  writeFileSync(join(dir, 'GeoLite2-ASN.mmdb'), asnDatabase(6, [
    { network: '81.2.68.0/22', data: asnRecord(20712, 'Andrews & Arnold Ltd') },
    { network: '1.128.0.0/16', data: asnRecord(1221, 'Telstra') },
    { network: '1.129.0.0/16', data: asnRecord(9009, 'M247') },
  ]));
  writeFileSync(join(dir, 'GeoIP2-Anonymous-IP.mmdb'), anonymousIpDatabase(6, [{ network: '1.129.0.0/16', data: anonymousIpRecord({ vpn: true }) }]));
  return dir;
}

/** A clock the test moves: evaluations and history windows run on it. */
export function testClock(start = Date.parse('2026-06-01T12:00:00.000Z')) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/**
 * The app on a store of the test's, with the places above. The history step's deadline is long
 * here: these tests are about what is remembered, on a machine other tests keep busy; the deadline
 * itself is tested with a store held still (deadline.test.ts).
 */
export async function behaviourApp(databaseUrl: string, clock: { now: () => number }, env: Record<string, string> = {}): Promise<TestApp> {
  return startTestApp({ DATABASE_URL: databaseUrl, DATA_DIR: behaviourDataDir(), HISTORY_TIMEOUT_MS: '5000', ...env }, {}, { now: clock.now });
}

export interface Evaluated {
  id: string;
  history: HistoryFacts | null;
  rules: string[];
  unavailable: string[];
  state: string;
  lists: { block: Array<{ kind: string; value: string }>; allow: Array<{ kind: string; value: string }> };
}

export async function evaluate(t: TestApp, body: Record<string, unknown>, key = KEY_A): Promise<Evaluated> {
  const response: LightMyRequestResponse = await t.app.inject({
    method: 'POST', url: '/v1/risk/evaluate', headers: bearer(key),
    payload: { ip: PLACES.london, email: 'jane.doe@example.com', event_type: 'account_login', ...body },
  });
  expect(response.statusCode, response.body).toBe(200);
  const parsed = expectEvaluation(response) as unknown as Evaluated & { score: { details: Array<{ rule_name: string }>; state: string } };
  return { ...parsed, rules: parsed.score.details.map((d) => d.rule_name), state: parsed.score.state };
}

export const device = (n: number) => n.toString(16).padStart(64, 'd');
