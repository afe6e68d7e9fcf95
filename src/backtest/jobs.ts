import type { Logger } from 'pino';
import type { Engine } from '../store/engine.js';
import type { BacktestProgress } from './backtest.js';
import { BacktestRecords, type BacktestRecord, type BacktestSummary, type NewBacktest } from './records.js';
import { runBacktestInWorker } from './worker.js';
import type { BacktestReport } from './report.js';

/**
 * The backtests this process runs (the admin API's): each in a worker thread (worker.ts), its
 * row in the store (records.ts) written when it starts and ends, so any replica reads the result.
 * Bounded: one running backtest per account in this process (a second is refused with 409 until
 * it ends), and progress kept in memory for the last MAX_JOBS only; what is older is read from
 * the store. A backtest a replica was running when it stopped stays `running` in the store: its
 * worker went with the process (`close` marks those it can as cancelled).
 */
export const MAX_JOBS = 20;

interface Job {
  id: string;
  account: string;
  progress: BacktestProgress;
  controller: AbortController;
  running: boolean;
}

export class BacktestConflict extends Error {
  override name = 'BacktestConflict';
}

export class BacktestJobs {
  readonly records: BacktestRecords;
  private readonly jobs = new Map<string, Job>();
  private readonly settled = new Set<Promise<void>>();

  constructor(
    private readonly engine: Engine,
    /** `run`: the worker's entry point (tests hold one running until it is cancelled). */
    private readonly options: { logger: Logger; now: () => number; run?: typeof runBacktestInWorker; /** BacktestOptions.dutyCycle */ dutyCycle?: number },
  ) {
    this.records = new BacktestRecords(engine);
  }

  async start(backtest: NewBacktest, by: { actor: string }): Promise<BacktestRecord> {
    for (const job of this.jobs.values()) {
      if (job.account === backtest.account && job.running) {
        throw new BacktestConflict(`backtest ${job.id} is still running for this account: wait for it, or cancel it`);
      }
    }
    const record = await this.records.create(backtest, by, this.options.now());
    const job: Job = { id: record.id, account: record.account_id, progress: record.progress, controller: new AbortController(), running: true };
    this.remember(job);
    const run = this.options.run ?? runBacktestInWorker;
    const done = run(
      { database: this.engine.database, scope: { account: backtest.account, eventType: backtest.eventType, since: backtest.since, until: backtest.until }, yaml: backtest.yaml, dutyCycle: this.options.dutyCycle },
      { onProgress: (progress) => (job.progress = progress), signal: job.controller.signal },
    ).then(
      (report: BacktestReport) => this.end(job, { status: 'done', progress: { evaluations: report.evaluations, replayed: report.replayed, skipped: report.skipped.total }, report }),
      (error: Error) => (job.controller.signal.aborted ? this.stopped(job) : this.end(job, { status: 'failed', progress: job.progress, error: error.message })),
    );
    const settled = done.finally(() => this.settled.delete(settled));
    this.settled.add(settled);
    return this.live(record);
  }

  /** A stored backtest with the live progress of this process's run, where it has one. */
  live<T extends BacktestSummary>(record: T): T {
    const job = this.jobs.get(record.id);
    return job?.running ? { ...record, progress: job.progress } : record;
  }

  /** The backtest with its live progress when this process runs it; from the store otherwise. */
  async get(account: string, eventType: string, id: string): Promise<BacktestRecord | undefined> {
    const record = await this.records.get(account, eventType, id);
    return record === undefined ? undefined : this.live(record);
  }

  /**
   * Stops a running backtest and marks it cancelled. Refused (BacktestConflict) when it has ended,
   * or when another replica runs it: only the process whose worker it is can stop it.
   */
  async cancel(account: string, eventType: string, id: string, by: { actor: string }): Promise<BacktestRecord | undefined> {
    const record = await this.records.get(account, eventType, id);
    if (record === undefined) return undefined;
    if (record.status !== 'running') throw new BacktestConflict(`backtest ${id} has already ended (${record.status})`);
    const job = this.jobs.get(id);
    if (job === undefined || !job.running) throw new BacktestConflict(`backtest ${id} runs on another replica; cancel it there`);
    await this.records.cancel(id, account, by, job.progress, this.options.now());
    job.controller.abort(new Error('cancelled'));
    job.running = false;
    return this.get(account, eventType, id);
  }

  /** Stops every running backtest (shutdown) and marks them cancelled. */
  async close(): Promise<void> {
    for (const job of this.jobs.values()) if (job.running) job.controller.abort(new Error('the service is stopping'));
    await Promise.all(this.settled);
  }

  private remember(job: Job): void {
    this.jobs.set(job.id, job);
    for (const [id, old] of this.jobs) {
      if (this.jobs.size <= MAX_JOBS) break;
      if (!old.running) this.jobs.delete(id);
    }
  }

  private async end(job: Job, end: Parameters<BacktestRecords['finish']>[1]): Promise<void> {
    job.running = false;
    await this.records.finish(job.id, end, this.options.now()).catch((error: Error) => {
      this.options.logger.warn({ backtest: job.id, error: error.message }, 'backtest ended but its result could not be stored');
    });
  }

  /** Aborted: by `cancel` (already recorded: `finish` keeps the first ending) or by `close`, recorded here. */
  private stopped(job: Job): Promise<void> {
    return this.end(job, { status: 'cancelled', progress: job.progress, error: 'the service stopped while it ran' });
  }
}
