import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Resolver } from '../dns/resolver.js';
import type { Evaluation } from '../evaluation/evaluate.js';
import type { SourceStatus } from '../core/ports.js';
import type { State } from '../rules/ports.js';
import type { HistoryStoreStats } from '../history/store.js';
import type { EvaluationLogStats } from '../store/evaluation-log.js';
import type { StoreObserver } from '../store/observer.js';
import { CappedCounts, OTHER } from './counts.js';

/**
 * The service's Prometheus metrics (docs/operations.md "Metrics"). The request path only adds to plain counters
 * and one histogram; everything that is a state (caches, queues, sources, the store's health) is
 * read when Prometheus scrapes, from the objects that hold it.
 */

/** Label caps (see CappedCounts): past these, a new value is counted as `other`. */
export const LABEL_CAPS = { eventTypes: 64, rules: 256, checks: 256 } as const;

/** Seconds: from 1 ms (a cached evaluation) to 5 s (past every deadline the service sets). */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Seconds: an indexed single-row read on loopback takes well under a millisecond. */
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** What is read at scrape time: the app's live objects. */
export interface ScrapeSources {
  /** Every key, rule and data source's status (`app.sources()`). */
  sources(): SourceStatus[];
  log(): EvaluationLogStats;
  /** Behaviour history's counters and queue; null when it is off (HISTORY_DAYS=0). */
  history(): HistoryStoreStats | null;
  storeAvailable(): boolean;
  /** The e-mail check's DNS resolver; null when a test gave the app an inspector of its own. */
  resolver: Resolver | null;
}

export interface Metrics {
  readonly contentType: string;
  /** The text exposition of every metric. */
  render(): Promise<string>;
  /** Request path: one response sent. `route` is the matched route's pattern, undefined when none matched. */
  requestCompleted(method: string, route: string | undefined, status: number, seconds: number): void;
  /** Request path: one evaluation answered. */
  evaluated(evaluation: Evaluation): void;
  /** The store's own work (polls, snapshots, log batches, prunes). */
  storeOperation: StoreObserver;
  /** Connects the scrape-time readers, once the app's resources exist. */
  attach(sources: ScrapeSources): void;
}

export function createMetrics(options: { version: string }): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  let scrape: ScrapeSources | null = null;

  new Gauge({ name: 'risk_build_info', help: 'The running version (always 1).', labelNames: ['version'], registers }).set({ version: options.version }, 1);

  // --- HTTP ---
  const requestDuration = new Histogram({
    name: 'risk_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its response, by method, matched route and status. Its _count is the request rate.',
    labelNames: ['method', 'route', 'status'],
    buckets: REQUEST_BUCKETS,
    registers,
  });
  const requestSeries = new Map<string, Histogram.Internal<'method' | 'route' | 'status'>>();

  // --- Evaluations: plain counts on the request path, handed to prom-client when scraped ---
  const evaluations = new CappedCounts<Record<State, number>>(LABEL_CAPS.eventTypes, () => ({ approve: 0, review: 0, decline: 0 }));
  const ruleHits = new CappedCounts(LABEL_CAPS.rules, () => ({ live: 0, dry_run: 0 }));
  const unavailable = new CappedCounts(LABEL_CAPS.checks, () => ({ count: 0 }));
  new Counter({
    name: 'risk_evaluations_total',
    help: 'Evaluations answered, by event type and state.',
    labelNames: ['event_type', 'state'],
    registers,
    collect() {
      exportTwoLevels(this, evaluations, 'event_type', 'state');
    },
  });
  new Counter({
    name: 'risk_rule_hits_total',
    help: 'Rules that fired, by rule id and mode (live: scored; dry_run: reported only).',
    labelNames: ['rule', 'mode'],
    registers,
    collect() {
      exportTwoLevels(this, ruleHits, 'rule', 'mode');
    },
  });
  new Counter({
    name: 'risk_checks_unavailable_total',
    help: 'Evaluations that named a check in `unavailable` (email.mx, ip.tor, store, rule:<id>...).',
    labelNames: ['check'],
    registers,
    collect() {
      this.reset();
      for (const [check, { count }] of unavailable.entries()) this.inc({ check }, count);
    },
  });

  // --- DNS (read at scrape) ---
  const resolverGauge = (name: string, help: string, read: (r: Resolver) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        if (scrape?.resolver) this.set(read(scrape.resolver));
      },
    });
  resolverGauge('risk_dns_cache_entries', 'Answers in the DNS cache.', (r) => r.cacheSize);
  resolverGauge('risk_dns_cache_bytes', 'Estimated bytes the DNS cache holds.', (r) => r.cacheBytes);
  resolverGauge('risk_dns_cache_max_entries', 'The DNS cache bound in entries.', (r) => r.cacheLimits.entries);
  resolverGauge('risk_dns_cache_max_bytes', 'The DNS cache bound in estimated bytes.', (r) => r.cacheLimits.bytes);
  resolverGauge('risk_dns_queries_in_flight', 'DNS queries in flight.', (r) => r.inFlight);
  new Gauge({
    name: 'risk_dns_server_backing_off',
    help: '1 while a DNS server is skipped after repeated failures (see README "What it checks").',
    labelNames: ['server'],
    registers,
    collect() {
      this.reset();
      for (const { server, backingOff } of scrape?.resolver?.servers() ?? []) this.set({ server }, backingOff ? 1 : 0);
    },
  });
  new Counter({
    name: 'risk_dns_lookups_total',
    help: 'DNS look-ups that had to ask a server, by outcome: records, nxdomain, nodata, or why they failed (timeout, servfail, refused, network, local, malformed, backoff).',
    labelNames: ['outcome'],
    registers,
    collect() {
      this.reset();
      for (const [outcome, value] of scrape?.resolver?.counts().outcomes ?? []) this.inc({ outcome }, value);
    },
  });
  new Counter({
    name: 'risk_dns_cache_hits_total',
    help: 'DNS look-ups answered from the cache.',
    registers,
    collect() {
      this.reset();
      this.inc(scrape?.resolver?.counts().cacheHits ?? 0);
    },
  });

  // --- The store ---
  const storeDuration = new Histogram({
    name: 'risk_store_operation_duration_seconds',
    help: 'Time the store took, by operation: poll (the change counter, every RELOAD_INTERVAL_MS), snapshot, log_write (a batch of the evaluation log), prune.',
    labelNames: ['operation'],
    buckets: STORE_BUCKETS,
    registers,
  });
  const storeErrors = new Counter({
    name: 'risk_store_errors_total',
    help: 'Store operations that failed, by operation.',
    labelNames: ['operation'],
    registers,
  });
  new Gauge({
    name: 'risk_store_up',
    help: '1 while the store answers; 0 while evaluations answer without it.',
    registers,
    collect() {
      if (scrape) this.set(scrape.storeAvailable() ? 1 : 0);
    },
  });
  const logGauge = (name: string, help: string, read: (s: EvaluationLogStats) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        if (scrape) this.set(read(scrape.log()));
      },
    });
  logGauge('risk_evaluation_log_queued', 'Evaluations waiting to be written to the log (bound: 20,000).', (s) => s.queued);
  logGauge('risk_evaluation_log_queued_bytes', 'Estimated bytes waiting to be written to the log (bound: 32 MiB).', (s) => s.queued_bytes);
  new Counter({
    name: 'risk_evaluation_log_records_total',
    help: 'Evaluations handed to the log, by outcome: written, dropped (the queue was full), failed (the store refused the batch).',
    labelNames: ['outcome'],
    registers,
    collect() {
      if (!scrape) return;
      const stats = scrape.log();
      this.reset();
      for (const outcome of ['written', 'dropped', 'failed'] as const) this.inc({ outcome }, stats[outcome]);
    },
  });
  new Counter({
    name: 'risk_evaluation_log_pruned_total',
    help: 'Evaluations removed from the log past RETENTION_DAYS.',
    registers,
    collect() {
      this.reset();
      this.inc(scrape?.log().pruned ?? 0);
    },
  });

  // --- Keys, rules and data sources (read at scrape) ---
  const sourceGauge = (name: string, help: string, read: (s: SourceStatus, now: number) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames: ['source'],
      registers,
      collect() {
        this.reset();
        const now = Date.now();
        for (const status of scrape?.sources() ?? []) {
          const value = read(status, now);
          if (value !== null) this.set({ source: status.name }, value);
        }
      },
    });
  sourceGauge('risk_data_source_loaded', '1 when the source is loaded and serving.', (s) => (s.loaded ? 1 : 0));
  sourceGauge('risk_data_source_refused', '1 while the last load or reload of the source was refused (the last good copy serves; the log says why).', (s) => (s.error === null ? 0 : 1));
  sourceGauge('risk_data_source_entries', 'Entries in the loaded copy, where the source counts them.', (s) => s.entries);
  sourceGauge('risk_data_source_age_seconds', 'Seconds since the loaded copy was built, where the source has a build date.', (s, now) =>
    s.build_date === null ? null : Math.max(0, (now - Date.parse(s.build_date)) / 1000),
  );

  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),

    requestCompleted(method, route, status, seconds) {
      const m = METHODS.has(method) ? method : OTHER;
      // Unmatched paths are one series: a scanner's thousand URLs must not become a thousand series.
      const r = route ?? 'unmatched';
      const key = `${m} ${r} ${status}`;
      let series = requestSeries.get(key);
      if (series === undefined) {
        series = requestDuration.labels(m, r, String(status));
        requestSeries.set(key, series);
      }
      series.observe(seconds);
    },

    evaluated({ response, outcome }) {
      evaluations.of(response.event_type)[response.score.state] += 1;
      if (outcome.rule_ids !== undefined) for (const id of outcome.rule_ids) ruleHits.of(id).live += 1;
      if (outcome.dry_run_ids !== undefined) for (const id of outcome.dry_run_ids) ruleHits.of(id).dry_run += 1;
      for (const name of response.unavailable) unavailable.of(name).count += 1;
    },

    storeOperation(operation, seconds, ok) {
      storeDuration.observe({ operation }, seconds);
      if (!ok) storeErrors.inc({ operation });
    },

    attach(sources) {
      scrape = sources;
      const history = sources.history();
      if (history !== null) registerHistoryMetrics(registers, () => sources.history()!, history.cached !== undefined ? 'sqlite' : 'postgres');
    },
  };
}

/**
 * Behaviour history's metrics, read at scrape, registered only where they mean something: none when
 * it is off (HISTORY_DAYS=0), and each store's own only for that store (no gauge reading a 0 that
 * is not there). What tells an operator its writing falls behind the traffic before anything goes
 * unrecorded: what waits grows, then, at its bound, events are refused (on SQLite answered without
 * history, `store` in `unavailable`). docs/operations.md gives each store's bounds.
 */
function registerHistoryMetrics(registers: Registry[], read: () => HistoryStoreStats, engine: 'sqlite' | 'postgres'): void {
  const gauge = (name: string, help: string, value: (s: HistoryStoreStats) => number | undefined) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(value(read()) ?? 0);
      },
    });
  gauge('risk_history_pending', engine === 'sqlite'
    ? 'Identifiers with changes waiting to be written, not counting those in flight to the writer thread (at most 2,000); all held within the bound of 100,000 identifiers or 64 MiB.'
    : 'Identifiers with changes waiting to be written, the batch being sent included (bound: 50,000).', (s) => s.pending);
  if (engine === 'sqlite') {
    gauge('risk_history_held', 'Identifiers held in memory (bound: 100,000).', (s) => s.cached);
    gauge('risk_history_held_bytes', 'Estimated bytes the identifiers in memory hold (bound: 64 MiB; brought down to 16 MiB once written).', (s) => s.bytes);
  } else {
    gauge('risk_history_reads_waiting', 'Evaluations whose history read is in flight or waiting to be sent.', (s) => s.reading);
  }
  new Counter({
    name: 'risk_history_changes_total',
    help: 'Behaviour history not kept, by outcome: refused (an event, or the velocity counts an evaluation adds after its decision, not recorded: what waits to be written was at its bound), failed (the identifiers of a write the store refused).',
    labelNames: ['outcome'],
    registers,
    collect() {
      this.reset();
      const stats = read();
      this.inc({ outcome: 'refused' }, stats.refused ?? 0);
      this.inc({ outcome: 'failed' }, stats.failed);
    },
  });
  new Counter({
    name: 'risk_history_pruned_total',
    help: engine === 'sqlite'
      ? 'Behaviour history removed past HISTORY_DAYS: the cells, identifiers and set members taken out of its rows.'
      : 'Behaviour history removed past HISTORY_DAYS: rows.',
    registers,
    collect() {
      this.reset();
      this.inc(read().pruned);
    },
  });
}

/** Counts by two labels (`{ value: { value2: n } }`) into `counter`, as its whole content; zeros left out. */
function exportTwoLevels(counter: Counter<string>, counts: CappedCounts<Record<string, number>>, outer: string, inner: string): void {
  counter.reset();
  for (const [first, byInner] of counts.entries()) {
    for (const [second, value] of Object.entries(byInner)) if (value > 0) counter.inc({ [outer]: first, [inner]: second }, value);
  }
}
