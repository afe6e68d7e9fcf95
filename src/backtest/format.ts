import { STATES, type BacktestReport, type LabelStats } from './report.js';

/** A backtest report as text tables, for a terminal or a CI log (`npm run rules -- backtest`). */
export function formatReport(report: BacktestReport): string[] {
  const lines: string[] = [];
  const { skipped } = report;
  lines.push(`${report.account} / ${report.event_type}: ${report.since} to ${report.until}`);
  lines.push(`${report.evaluations} evaluations, ${report.replayed} replayed, ${skipped.total} skipped` +
    (skipped.total === 0 ? '' : ` (${Object.entries(skipped.reasons).filter(([, n]) => n > 0).map(([reason, n]) => `${reason.replace(/_/g, ' ')}: ${n}`).join(', ')})`));
  lines.push(`${report.changed.state} decisions change state, ${report.changed.score} change score`, '');

  lines.push('live \\ candidate');
  lines.push(...table(['', ...STATES, 'total'], STATES.map((live) => {
    const row = STATES.map((candidate) => report.transitions[live][candidate]);
    return [live, ...row.map(String), String(row.reduce((a, b) => a + b, 0))];
  })), '');

  lines.push('rules');
  lines.push(...table(['rule', 'live hits', 'live score', 'candidate hits', 'candidate score'], report.rules.map((r) => [
    r.rule_name, hits(r.live.hits, r.live.dry_run_hits), String(r.live.score), hits(r.candidate.hits, r.candidate.dry_run_hits), String(r.candidate.score),
  ])), '');

  lines.push(`labels: ${report.labels.labelled} labelled evaluations`);
  if (report.labels.labelled > 0) {
    lines.push(...table(['', 'fraud', 'legit', 'declined fraud', 'declined legit', 'precision', 'recall'], [
      labelRow('live', report.labels.live),
      labelRow('candidate', report.labels.candidate),
    ]));
    for (const state of STATES) {
      const l = report.labels.live.by_state[state];
      const c = report.labels.candidate.by_state[state];
      lines.push(`  ${state.padEnd(8)} live fraud ${l.fraud}, legit ${l.legit}; candidate fraud ${c.fraud}, legit ${c.legit}`);
    }
  }
  lines.push('');

  if (report.sample.length > 0) {
    lines.push(`changed decisions (${report.sample.length} of ${report.changed.state})`);
    lines.push(...table(['evaluation', 'label', 'live', 'candidate', 'rules added', 'rules removed'], report.sample.map((s) => [
      s.id, s.label ?? '-', `${s.live.state} ${s.live.fraud_score}`, `${s.candidate.state} ${s.candidate.fraud_score}`,
      s.rules_added.join(', ') || '-', s.rules_removed.join(', ') || '-',
    ])));
  }
  return lines;
}

const hits = (n: number, dryRun: number) => (dryRun === 0 ? String(n) : `${n} (${dryRun} dry-run)`);
const percent = (value: number | null) => (value === null ? '-' : `${(value * 100).toFixed(1)}%`);

function labelRow(name: string, stats: LabelStats): string[] {
  const c = stats.confusion;
  return [name, String(c.true_positive + c.false_negative), String(c.false_positive + c.true_negative), String(c.true_positive), String(c.false_positive),
    percent(stats.precision), percent(stats.recall)];
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `  ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}`.trimEnd();
  return [line(header), ...rows.map(line)];
}
