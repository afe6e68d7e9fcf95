import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, login, type Session } from '../support/admin.js';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { ENGINES, freshDatabaseUrl, type EngineName } from '../support/store.js';

/**
 * Hit rates of the live rules over 24 hours and 7 days, on both engines: evaluations made through
 * the public API at chosen times (the app's clock moved, not waited out), and the admin API's
 * counts compared with the log's own: every logged answer read back, its fired rules (live and
 * dry-run) and its unknown ones (`rule:<id>` in `unavailable`) counted per window.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Window { window: string; since: string; evaluations: number; rules: Array<{ rule_id: string; fired: number; unknown: number; fired_share: number | null; unknown_share: number | null }> }

describe.each(ENGINES)('rule hit rates on %s', (engine: EngineName) => {
  // Each engine's seed later than the one before: evaluation ids never go back in time within a process.
  const NOW = Date.UTC(2026, 10, 20, 12, 30) + ENGINES.indexOf(engine) * 30 * DAY;
  let t: TestApp;
  let analyst: Session;
  let clock = NOW;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_URL: await freshDatabaseUrl(engine) }, {}, { now: () => clock });
    await createUser(t.app.store, 'analyst@example.com', { roles: { default: 'analyst' } });
    analyst = await login(t.app, 'analyst@example.com');
    // Sign-ups 8 days ago (outside both windows), 3 days and 30 hours ago (7 days only), 23 and 2 hours ago and now (both).
    const seeded: Array<[number, Record<string, unknown>]> = [
      [-8 * 24, { email: 'old@mailinator.com' }],
      [-3 * 24, { email: 'jane@mailinator.com', ip: '203.0.113.7' }],
      [-30, { email: 'ed@example.com' }],
      [-23, { email: 'amy@mailinator.com' }],
      [-2, { email: 'bo@example.org', ip: '2001:db8::1' }],
      [-2, { email: 'cy@mailinator.com' }],
      [0, { email: 'di@example.net' }],
      [0, { email: 'di@example.net', event_type: 'account_login' }],
    ];
    for (const [hours, overrides] of seeded) {
      clock = NOW + hours * HOUR;
      const answer = await t.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: evaluationBody(overrides) });
      expect(answer.statusCode, answer.body).toBe(200);
      await t.app.store.log.flush();
    }
    clock = NOW;
  });
  afterAll(async () => {
    await t?.app.close();
  });

  /** The windows' counts straight from the log: each logged answer of account_register read back. */
  async function fromTheLog(since: number) {
    const rows = await t.app.store.engine.db.selectFrom('evaluations').select(['evaluated_at', 'response'])
      .where('account_id', '=', 'default').where('event_type', '=', 'account_register').execute();
    const counts = new Map<string, { fired: number; unknown: number }>();
    let evaluations = 0;
    for (const row of rows.filter((r) => Number(r.evaluated_at) >= since)) {
      evaluations += 1;
      const answer = (typeof row.response === 'string' ? JSON.parse(row.response) : row.response) as { score: { details: Array<{ rule_id: string }> }; dry_run?: Array<{ rule_id: string }>; unavailable: string[] };
      const bump = (id: string, what: 'fired' | 'unknown') => counts.set(id, { fired: 0, unknown: 0, ...counts.get(id), [what]: (counts.get(id)?.[what] ?? 0) + 1 });
      for (const d of [...answer.score.details, ...(answer.dry_run ?? [])]) bump(d.rule_id, 'fired');
      for (const u of answer.unavailable.filter((u) => u.startsWith('rule:'))) bump(u.slice(5), 'unknown');
    }
    return { evaluations, counts };
  }

  it('answers, per window, the evaluations and each live rule\'s fired and unknown counts the log holds', async () => {
    const answer = await t.app.inject({ url: '/admin/v1/accounts/default/rule-sets/account_register/hit-rates', headers: analyst.read });
    expect(answer.statusCode, answer.body).toBe(200);
    const { windows } = answer.json() as { windows: Window[] };
    expect(windows.map((w) => [w.window, w.since])).toEqual([
      ['24h', new Date(NOW - 30 * 60_000 - 23 * HOUR).toISOString()],
      ['7d', new Date(NOW - 30 * 60_000 - (7 * 24 - 1) * HOUR).toISOString()],
    ]);
    for (const w of windows) {
      const log = await fromTheLog(Date.parse(w.since));
      expect(w.evaluations).toBe(log.evaluations);
      for (const rule of w.rules) {
        const counted = log.counts.get(rule.rule_id) ?? { fired: 0, unknown: 0 };
        expect({ id: rule.rule_id, fired: rule.fired, unknown: rule.unknown }).toEqual({ id: rule.rule_id, ...counted });
        expect(rule.fired_share).toBeCloseTo(counted.fired / log.evaluations);
      }
    }
    expect(windows.map((w) => w.evaluations)).toEqual([4, 6]);
    // The seed exercises both counts: disposable addresses fired, some input unknown (no DNS answers here).
    const disposable = windows[1]!.rules.find((r) => r.rule_id === 'email_disposable');
    expect(disposable?.fired).toBe(3);
    expect(windows[1]!.rules.some((r) => r.unknown > 0)).toBe(true);
  });

  it('is refused for an event type with no live version, and needs a session', async () => {
    const missing = await t.app.inject({ url: '/admin/v1/accounts/default/rule-sets/nothing_here/hit-rates', headers: analyst.read });
    expect(missing.statusCode).toBe(404);
    const anonymous = await t.app.inject({ url: '/admin/v1/accounts/default/rule-sets/account_register/hit-rates' });
    expect(anonymous.statusCode).toBe(401);
  });
});
