import { useId, useMemo } from 'preact/hooks';
import type { Answered } from '../../../api/client';
import { StateBadge, Time } from '../../../components/ui';
import { href } from '../../../router';
import { StateChart, STATES, type State } from './StateChart';

export type Report = NonNullable<Answered<'getBacktest'>['report']>;
type LabelStats = Report['labels']['live'];

/**
 * A backtest's report (or the shadow comparison, which has its shape) as tables: what changed,
 * the transitions live → candidate, decisions per state as a chart, each rule's hits and points,
 * the changed decisions (linked to the decisions page) and the labels' confusion matrix.
 * `candidateName` is what the other side is called: "candidate" or "shadow".
 */
export function ReportView({ report, account, candidateName }: { report: Report; account: string; candidateName: string }) {
  // Kept while the report is the same: the chart is drawn again only when these change.
  const live = useMemo(() => countsBy((s) => sum(STATES.map((c) => report.transitions[s][c]))), [report]);
  const candidate = useMemo(() => countsBy((c) => sum(STATES.map((s) => report.transitions[s][c]))), [report]);
  return (
    <div class="report">
      <Summary report={report} />
      <div class="report-row">
        <Transitions report={report} candidateName={candidateName} />
        <StateChart live={live} candidate={candidate} candidateName={candidateName} />
      </div>
      <Rules report={report} candidateName={candidateName} />
      <Changed report={report} account={account} candidateName={candidateName} />
      <Labels report={report} candidateName={candidateName} />
    </div>
  );
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const countsBy = (count: (state: State) => number) => ({ approve: count('approve'), review: count('review'), decline: count('decline') });
const percent = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(1)} %`);
const signed = (value: number) => (value > 0 ? `+${value}` : String(value));

function Summary({ report }: { report: Report }) {
  const reasons = Object.entries(report.skipped.reasons).filter(([, n]) => n > 0).map(([why, n]) => `${n} ${why.replace('_', ' ')}`);
  return (
    <dl class="facts report-summary">
      <dt>Range</dt>
      <dd><Time at={report.since} /> to <Time at={report.until} /></dd>
      <dt>Evaluations</dt>
      <dd>{report.evaluations} logged, {report.replayed} compared{report.skipped.total > 0 ? `, ${report.skipped.total} skipped (${reasons.join(', ')})` : ''}</dd>
      <dt>Changed</dt>
      <dd><strong>{report.changed.state}</strong> changed state, {report.changed.score} changed score</dd>
    </dl>
  );
}

function Transitions({ report, candidateName }: { report: Report; candidateName: string }) {
  return (
    <table class="matrix">
      <caption>State transitions: live (rows) → {candidateName} (columns)</caption>
      <thead>
        <tr><th scope="col">live \ {candidateName}</th>{STATES.map((c) => <th key={c} scope="col" class="num">{c}</th>)}</tr>
      </thead>
      <tbody>
        {STATES.map((s) => (
          <tr key={s}>
            <th scope="row">{s}</th>
            {STATES.map((c) => {
              const n = report.transitions[s][c];
              const changed = s !== c && n > 0;
              return <td key={c} class={`num${changed ? ' changed' : ''}`} title={changed ? `${n} from ${s} to ${c}` : undefined}>{n}</td>;
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Rules({ report, candidateName }: { report: Report; candidateName: string }) {
  const id = useId();
  return (
    <section aria-labelledby={`${id}-rules`}>
      <h3 id={`${id}-rules`}>Rules: hits and points</h3>
      {report.rules.length === 0 ? <p class="muted">No rule in either set fired, and the {candidateName} names none.</p> : (
        <table class="rule-hits">
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col" class="num">Hits live</th><th scope="col" class="num">Hits {candidateName}</th><th scope="col" class="num">Δ hits</th>
              <th scope="col" class="num">Points live</th><th scope="col" class="num">Points {candidateName}</th>
            </tr>
          </thead>
          <tbody>
            {report.rules.map((r) => {
              const delta = r.candidate.hits - r.live.hits;
              const changed = delta !== 0 || r.candidate.score !== r.live.score;
              return (
                <tr key={r.rule_name} class={changed ? 'changed' : undefined}>
                  <th scope="row" class="wrap">{r.rule_name}</th>
                  <td class="num">{r.live.hits}{r.live.dry_run_hits > 0 ? <span class="muted"> ({r.live.dry_run_hits} dry-run)</span> : null}</td>
                  <td class="num">{r.candidate.hits}{r.candidate.dry_run_hits > 0 ? <span class="muted"> ({r.candidate.dry_run_hits} dry-run)</span> : null}</td>
                  <td class="num">{delta === 0 ? <span class="muted">0</span> : <strong>{signed(delta)}</strong>}</td>
                  <td class="num">{r.live.score}</td>
                  <td class="num">{r.candidate.score}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

const StateScore = ({ state, score }: { state: State; score: number }) => <><StateBadge state={state} /> <span class="muted">({score})</span></>;

function Changed({ report, account, candidateName }: { report: Report; account: string; candidateName: string }) {
  const id = useId();
  const shown = report.sample.length;
  return (
    <section aria-labelledby={`${id}-changed`}>
      <h3 id={`${id}-changed`}>Changed decisions</h3>
      {shown === 0 ? <p class="muted">No decision changes state.</p> : (
        <>
          <p class="muted">{shown < report.changed.state ? `The first ${shown} of ${report.changed.state}, oldest first.` : `All ${shown}, oldest first.`}</p>
          <table class="changed-decisions">
            <thead>
              <tr><th scope="col">Decision</th><th scope="col">Evaluated</th><th scope="col">Live</th><th scope="col">{capitalised(candidateName)}</th><th scope="col">Rules fired / no longer fired</th><th scope="col">Label</th></tr>
            </thead>
            <tbody>
              {report.sample.map((d) => (
                <tr key={d.id}>
                  <td><a class="mono" href={href(account, 'decisions', d.id)}>{d.id}</a></td>
                  <td class="nowrap"><Time at={d.evaluated_at} /></td>
                  <td class="nowrap"><StateScore state={d.live.state} score={d.live.fraud_score} /></td>
                  <td class="nowrap"><StateScore state={d.candidate.state} score={d.candidate.fraud_score} /></td>
                  <td class="wrap">
                    {d.rules_added.map((r) => <div key={`+${r}`}>+ {r}</div>)}
                    {d.rules_removed.map((r) => <div key={`-${r}`}>− {r}</div>)}
                    {d.rules_added.length + d.rules_removed.length === 0 ? <span class="muted">same rules, other points</span> : null}
                  </td>
                  <td>{d.label ?? <span class="muted">none</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function Labels({ report, candidateName }: { report: Report; candidateName: string }) {
  const { labels } = report;
  const id = useId();
  const sides: Array<[string, LabelStats]> = [['Live', labels.live], [capitalised(candidateName), labels.candidate]];
  return (
    <section aria-labelledby={`${id}-labels`}>
      <h3 id={`${id}-labels`}>Labels</h3>
      {labels.labelled === 0 ? <p class="muted">No labels in range: label decisions fraud or legit to see precision and recall here.</p> : (
        <>
          <p class="muted">{labels.labelled} labelled evaluation{labels.labelled === 1 ? '' : 's'}. Decline is taken as the prediction of fraud.</p>
          <table class="labels-by-state">
            <caption>Labels per state</caption>
            <thead>
              <tr><th scope="col">Side</th>{STATES.map((s) => <th key={s} scope="col" class="num">{s}: fraud / legit</th>)}</tr>
            </thead>
            <tbody>
              {sides.map(([name, stats]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  {STATES.map((s) => <td key={s} class="num">{stats.by_state[s].fraud} / {stats.by_state[s].legit}</td>)}
                </tr>
              ))}
            </tbody>
          </table>
          <table class="confusion">
            <caption>Confusion matrix of decline for fraud</caption>
            <thead>
              <tr>
                <th scope="col">Side</th>
                <th scope="col" class="num">Declined, fraud</th><th scope="col" class="num">Declined, legit</th>
                <th scope="col" class="num">Not declined, fraud</th><th scope="col" class="num">Not declined, legit</th>
                <th scope="col" class="num">Precision</th><th scope="col" class="num">Recall</th>
              </tr>
            </thead>
            <tbody>
              {sides.map(([name, stats]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td class="num">{stats.confusion.true_positive}</td>
                  <td class="num">{stats.confusion.false_positive}</td>
                  <td class="num">{stats.confusion.false_negative}</td>
                  <td class="num">{stats.confusion.true_negative}</td>
                  <td class="num">{percent(stats.precision)}</td>
                  <td class="num">{percent(stats.recall)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
