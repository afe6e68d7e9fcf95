import { randomBytes } from 'node:crypto';
import { appendAudit } from '../store/audit.js';
import type { Engine } from '../store/engine.js';
import { fromJson } from '../store/json.js';
import type { BacktestRow, BacktestStatus } from '../store/schema.js';
import type { BacktestProgress } from './backtest.js';
import type { BacktestReport } from './report.js';

/**
 * Backtests in the store (migration 8): a row when one starts (audited, in the same transaction),
 * updated when it ends, so every replica reads its status and report. Bounded: an account keeps
 * its last BACKTESTS_KEPT per event type; older rows are deleted when a new one starts.
 */
export const BACKTESTS_KEPT = 50;

export type BacktestRecord = Omit<BacktestRow, 'report' | 'progress'> & { progress: BacktestProgress; report: BacktestReport | null };
export type BacktestSummary = Omit<BacktestRecord, 'report' | 'yaml'>;

export interface NewBacktest {
  account: string;
  eventType: string;
  since: number;
  until: number;
  yaml: string;
  ruleSetVersion: number | null;
}

const SUMMARY_COLUMNS = ['id', 'account_id', 'event_type', 'status', 'since', 'until', 'rule_set_version', 'created_by', 'created_at', 'finished_at', 'progress', 'error'] as const;

export class BacktestRecords {
  constructor(private readonly engine: Engine) {}

  async create(backtest: NewBacktest, by: { actor: string }, now: number): Promise<BacktestRecord> {
    const progress: BacktestProgress = { evaluations: 0, replayed: 0, skipped: 0 };
    const row: BacktestRow = {
      id: `bt_${randomBytes(8).toString('hex')}`, account_id: backtest.account, event_type: backtest.eventType, status: 'running',
      since: backtest.since, until: backtest.until, yaml: backtest.yaml, rule_set_version: backtest.ruleSetVersion,
      created_by: by.actor, created_at: now, finished_at: null, progress: JSON.stringify(progress), report: null, error: null,
    };
    await this.engine.db.transaction().execute(async (trx) => {
      await trx.insertInto('backtests').values(row).execute();
      const old = await trx.selectFrom('backtests').select('id').where('account_id', '=', row.account_id).where('event_type', '=', row.event_type)
        .orderBy('created_at', 'desc').orderBy('id', 'desc').offset(BACKTESTS_KEPT).limit(1000).execute();
      if (old.length > 0) await trx.deleteFrom('backtests').where('id', 'in', old.map((o) => o.id)).execute();
      await appendAudit(trx, now, {
        actor: by.actor, account_id: row.account_id, action: 'backtest.start', target: row.id,
        after: { event_type: row.event_type, since: new Date(row.since).toISOString(), until: new Date(row.until).toISOString(), rule_set_version: row.rule_set_version },
      });
    });
    return { ...row, progress, report: null };
  }

  /** Writes how it ended; a row that already ended (cancelled meanwhile) keeps its first ending. */
  async finish(id: string, end: { status: Exclude<BacktestStatus, 'running'>; progress: BacktestProgress; report?: BacktestReport; error?: string }, now: number): Promise<void> {
    await this.engine.db.updateTable('backtests')
      .set({ status: end.status, progress: JSON.stringify(end.progress), report: end.report === undefined ? null : JSON.stringify(end.report), error: end.error ?? null, finished_at: now })
      .where('id', '=', id).where('status', '=', 'running').execute();
  }

  /** Cancelled by `actor`, audited; false when it had already ended. */
  async cancel(id: string, account: string, by: { actor: string }, progress: BacktestProgress, now: number): Promise<boolean> {
    return this.engine.db.transaction().execute(async (trx) => {
      const updated = await trx.updateTable('backtests').set({ status: 'cancelled', finished_at: now, progress: JSON.stringify(progress) })
        .where('id', '=', id).where('account_id', '=', account).where('status', '=', 'running').executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return false;
      await appendAudit(trx, now, { actor: by.actor, account_id: account, action: 'backtest.cancel', target: id });
      return true;
    });
  }

  async get(account: string, eventType: string, id: string): Promise<BacktestRecord | undefined> {
    const row = await this.engine.db.selectFrom('backtests').selectAll().where('account_id', '=', account).where('event_type', '=', eventType).where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : { ...row, progress: JSON.parse(row.progress) as BacktestProgress, report: fromJson<BacktestReport>(row.report) };
  }

  /** The account's backtests of the event type, newest first, without their files and reports. */
  async list(account: string, eventType: string): Promise<BacktestSummary[]> {
    const rows = await this.engine.db.selectFrom('backtests').select(SUMMARY_COLUMNS).where('account_id', '=', account).where('event_type', '=', eventType)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(BACKTESTS_KEPT).execute();
    return rows.map((row) => ({ ...row, progress: JSON.parse(row.progress) as BacktestProgress }));
  }
}
