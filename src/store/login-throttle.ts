import type { Engine } from './engine.js';

/**
 * Failed logins counted in the store, so every replica sees the same counts: a fixed window per
 * key (`user:<hash>`, `ip:<address>`, the two joined for a user from an address). A check is one
 * indexed read of at most three rows; a failure one upsert per key. Rows whose window has ended
 * are deleted at most once a minute per replica.
 *
 * A successful login is remembered per user and address (`ok:` + the pair's key) for
 * KNOWN_PAIR_MS, so a user logging in from where they did before can be spared the count an
 * attacker spread over many addresses (src/admin/routes/session.ts); one row per pair that logged
 * in, deleted when it is older than that.
 */
export const KNOWN_PAIR_MS = 30 * 86_400_000;
const KNOWN = 'ok:';

export interface ThrottleRule {
  /** Failures allowed in a window; the next attempt is refused until the window ends. */
  maxFailures: number;
  windowMs: number;
  /** Not applied when the attempt's pair (`blockedFor`'s `pair`) logged in successfully in the last KNOWN_PAIR_MS. */
  sparesKnownPairs?: boolean;
}

export class LoginThrottle {
  private prunedAt = 0;

  constructor(private readonly engine: Engine) {}

  /**
   * Milliseconds until an attempt is allowed again for any of the keys (0: allowed now). With
   * `pair`, the same read tells whether that pair is known, which spares it the rules that say so.
   */
  async blockedFor(keys: Array<{ key: string; rule: ThrottleRule }>, at: number, pair?: string): Promise<number> {
    const read = pair === undefined ? keys.map((k) => k.key) : [...keys.map((k) => k.key), KNOWN + pair];
    const rows = await this.engine.db.selectFrom('login_throttle').selectAll().where('key', 'in', read).execute();
    const known = rows.some((row) => row.key === KNOWN + pair && Number(row.window_started_at) > at - KNOWN_PAIR_MS);
    let wait = 0;
    for (const row of rows) {
      const rule = keys.find((k) => k.key === row.key)?.rule;
      if (rule === undefined || (known && rule.sparesKnownPairs)) continue;
      const ends = row.window_started_at + rule.windowMs;
      if (row.failures >= rule.maxFailures && ends > at) wait = Math.max(wait, ends - at);
    }
    return wait;
  }

  async recordFailure(keys: Array<{ key: string; rule: ThrottleRule }>, at: number): Promise<void> {
    await this.engine.db.transaction().execute(async (trx) => {
      for (const { key, rule } of keys) {
        const expired = at - rule.windowMs;
        await trx.insertInto('login_throttle').values({ key, failures: 1, window_started_at: at })
          .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({
            failures: eb.case().when('login_throttle.window_started_at', '<=', expired).then(1).else(eb('login_throttle.failures', '+', 1)).end(),
            window_started_at: eb.case().when('login_throttle.window_started_at', '<=', expired).then(at).else(eb.ref('login_throttle.window_started_at')).end(),
          }))).execute();
      }
    });
    if (at - this.prunedAt > 60_000) {
      this.prunedAt = at;
      const longest = Math.max(...keys.map((k) => k.rule.windowMs));
      await this.engine.db.deleteFrom('login_throttle').where('window_started_at', '<=', at - longest).where('key', 'not like', `${KNOWN}%`).execute();
      await this.engine.db.deleteFrom('login_throttle').where('window_started_at', '<=', at - KNOWN_PAIR_MS).where('key', 'like', `${KNOWN}%`).execute();
    }
  }

  /** A successful login: clears its pair's count (not the user's or the address's: one good password does not excuse a spray) and remembers the pair. */
  async succeeded(pairKey: string, at: number): Promise<void> {
    await this.engine.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('login_throttle').where('key', '=', pairKey).execute();
      await trx.insertInto('login_throttle').values({ key: KNOWN + pairKey, failures: 0, window_started_at: at })
        .onConflict((oc) => oc.column('key').doUpdateSet({ window_started_at: at })).execute();
    });
  }

}
