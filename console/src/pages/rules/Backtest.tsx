import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Answered } from '../../api/client';
import { Confirm, Loading, Page, ProblemMessage, ScrollingText, Time } from '../../components/ui';
import { asProblem, useAction, useResource } from '../../hooks';
import { href, navigate } from '../../router';
import { useSession } from '../../session';
import { ReportView } from './backtest/Report';
import { RangeFields, rangeOf, type Range } from './backtest/RangeFields';
import { Shadow } from './backtest/Shadow';
import { VersionSelect } from './backtest/VersionSelect';

type Backtest = Answered<'getBacktest'>;
type Summary = Answered<'listBacktests'>['backtests'][number];

/** How often a running backtest is read again, and for how long at most (the service stops one after 10 minutes). */
const POLL_MS = 1_000;
const MAX_POLLS = 15 * 60;
/** How often the list is read again while a backtest in it runs. */
const LIST_POLL_MS = 2_000;

/** Backtests of an event type's drafts: start one, follow it, read its report; and its shadow. */
export function BacktestView({ eventType, backtestId }: { eventType: string; backtestId?: string | undefined }) {
  const { account } = useSession();
  if (!account) return <Page title={`Backtests: ${eventType}`}><p class="muted">No account yet.</p></Page>;
  return backtestId ? <OneBacktest key={backtestId} account={account} eventType={eventType} id={backtestId} /> : <Backtests account={account} eventType={eventType} />;
}

const backtestsPath = '/admin/v1/accounts/{account}/rule-sets/{event_type}/backtests';
const backtestPath = '/admin/v1/accounts/{account}/rule-sets/{event_type}/backtests/{backtest_id}';

function Backtests({ account, eventType }: { account: string; eventType: string }) {
  const { role } = useSession();
  const list = useResource(() => ok(api.GET(backtestsPath, { params: { path: { account, event_type: eventType } } })), [account, eventType]);
  // While one runs, its progress is read again (the loop ends when none runs or the page goes away).
  const running = list.data?.backtests.some((b) => b.status === 'running') ?? false;
  useEffect(() => {
    if (!running || list.loading) return;
    const timer = setTimeout(list.reload, LIST_POLL_MS);
    return () => clearTimeout(timer);
  }, [running, list.loading]);
  return (
    <Page title={`Backtests: ${eventType}`} intro="Replay the evaluations logged in a time range through a version of the rules (the draft, say), with the facts as they were, and see which decisions it would change before it goes live.">
      <p><a href={href(account, 'rules', eventType)}>← The {eventType} rule set</a></p>
      {role === 'admin' ? <StartBacktest account={account} eventType={eventType} /> : <p class="muted">Only the account's admins start backtests; you can read them.</p>}
      <section class="card" aria-labelledby="backtest-list">
        <h2 id="backtest-list">Recent backtests</h2>
        {list.loading && !list.data ? <Loading what="backtests" /> : null}
        <ProblemMessage problem={list.error} />
        {list.data ? <BacktestTable account={account} eventType={eventType} backtests={list.data.backtests} /> : null}
      </section>
      <Shadow account={account} eventType={eventType} />
    </Page>
  );
}

const STATUS_CLASS: Record<Summary['status'], string> = { running: 'warn', done: 'ok', failed: 'bad', cancelled: 'muted' };
const versionName = (version: number | null) => (version === null ? 'a file sent as text' : `version ${version}`);

function BacktestTable({ account, eventType, backtests }: { account: string; eventType: string; backtests: Summary[] }) {
  if (backtests.length === 0) return <p class="muted">No backtest of {eventType} yet.</p>;
  return (
    <table>
      <thead>
        <tr><th scope="col">Backtest</th><th scope="col">Status</th><th scope="col">Rules tested</th><th scope="col">Range</th><th scope="col">Started</th><th scope="col" class="num">Replayed / read</th></tr>
      </thead>
      <tbody>
        {backtests.map((b) => (
          <tr key={b.id}>
            <td><a class="mono" href={href(account, 'rules', eventType, 'backtest', b.id)}>{b.id}</a></td>
            <td><span class={`state ${STATUS_CLASS[b.status]}`}>{b.status}</span></td>
            <td>{versionName(b.rule_set_version)}</td>
            <td class="nowrap"><Time at={b.since} /> – <Time at={b.until} /></td>
            <td><Time at={b.created_at} /> <span class="muted">by</span> <code>{b.created_by}</code></td>
            <td class="num">{b.progress.replayed} / {b.progress.evaluations}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function StartBacktest({ account, eventType }: { account: string; eventType: string }) {
  const [version, setVersion] = useState<number | undefined>();
  const [range, setRange] = useState<Range>({ preset: '24h', from: '', to: '' });
  const start = useAction(async () => {
    const started = await ok(api.POST(backtestsPath, { params: { path: { account, event_type: eventType } }, body: { version: version!, ...rangeOf(range) } }));
    navigate(href(account, 'rules', eventType, 'backtest', started.id));
  });
  return (
    <section class="card" aria-labelledby="start-backtest">
      <h2 id="start-backtest">Start a backtest</h2>
      <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void start.run(); }}>
        <VersionSelect account={account} eventType={eventType} label="Rules to test" value={version} onChange={setVersion} error={start.error?.field('version')} />
        <RangeFields value={range} onChange={setRange} errors={start.error} />
        <button type="submit" class="primary" disabled={start.busy || version === undefined}>Start backtest</button>
      </form>
      <ProblemMessage problem={start.error?.errors.length ? undefined : start.error} />
    </section>
  );
}

/**
 * Reads a backtest, and again every POLL_MS while it runs: a bounded loop that ends when the
 * backtest does, when the page goes away, after MAX_POLLS reads, or on an error (shown, with a
 * way to try again).
 */
function usePolledBacktest(account: string, eventType: string, id: string) {
  const [backtest, setBacktest] = useState<Backtest | undefined>();
  const [error, setError] = useState<ReturnType<typeof asProblem> | undefined>();
  const [gaveUp, setGaveUp] = useState(false);
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async (polls: number) => {
      try {
        const answer = await ok(api.GET(backtestPath, { params: { path: { account, event_type: eventType, backtest_id: id } } }));
        if (!current) return;
        // A read sent before a cancel may answer after it: a finished backtest never runs again.
        setBacktest((shown) => (shown && shown.id === answer.id && shown.status !== 'running' && answer.status === 'running' ? shown : answer));
        setError(undefined);
        if (answer.status !== 'running') return;
        if (polls + 1 >= MAX_POLLS) setGaveUp(true);
        else timer = setTimeout(() => void read(polls + 1), POLL_MS);
      } catch (e) {
        if (current) setError(asProblem(e));
      }
    };
    setGaveUp(false);
    void read(0);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [account, eventType, id, generation]);
  return { backtest, error, gaveUp, setBacktest, reload: () => setGeneration((g) => g + 1) };
}

function OneBacktest({ account, eventType, id }: { account: string; eventType: string; id: string }) {
  const { role } = useSession();
  const { backtest, error, gaveUp, setBacktest, reload } = usePolledBacktest(account, eventType, id);
  const [confirming, setConfirming] = useState(false);
  const cancel = useAction(async () => {
    setBacktest(await ok(api.DELETE(backtestPath, { params: { path: { account, event_type: eventType, backtest_id: id } } })));
    setConfirming(false);
  });
  return (
    <Page title={`Backtest ${id}`}>
      <p><a href={href(account, 'rules', eventType, 'backtest')}>← Backtests of {eventType}</a></p>
      {error ? (
        <>
          <ProblemMessage problem={error} />
          <button type="button" onClick={reload}>Try again</button>
        </>
      ) : null}
      {!backtest && !error ? <Loading what="the backtest" /> : null}
      {backtest ? (
        <>
          <section class="card" aria-labelledby="backtest-status">
            <h2 id="backtest-status">{eventType}: {versionName(backtest.rule_set_version)}</h2>
            <BacktestStatus account={account} eventType={eventType} backtest={backtest} />
            {gaveUp ? <p class="muted">Still running after {MAX_POLLS / 60} minutes: reload the page to follow it.</p> : null}
            {backtest.status === 'running' && role === 'admin' ? <button type="button" class="danger" onClick={() => setConfirming(true)}>Cancel backtest</button> : null}
            <details>
              <summary>The rule file tested</summary>
              <ScrollingText label="The rule file tested">{backtest.yaml}</ScrollingText>
            </details>
          </section>
          {backtest.report ? <ReportView report={backtest.report} account={account} candidateName="candidate" /> : null}
        </>
      ) : null}
      {confirming ? (
        <Confirm title={`Cancel backtest ${id}?`} action="Cancel backtest" busy={cancel.busy} problem={cancel.error}
          onCancel={() => { setConfirming(false); cancel.clear(); }} onConfirm={() => void cancel.run()}>
          <p>The replay stops where it is and no report is kept. You can start it again.</p>
        </Confirm>
      ) : null}
    </Page>
  );
}

function BacktestStatus({ account, eventType, backtest }: { account: string; eventType: string; backtest: Backtest }) {
  const { progress } = backtest;
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <span class={`state ${STATUS_CLASS[backtest.status]}`} role="status">{STATUS_TEXT[backtest.status]}</span>
        {backtest.error ? <span> {backtest.error}</span> : null}
      </dd>
      <dt>Progress</dt>
      <dd>
        {/* The count in range is not known before the end: an indeterminate bar beside the counts so far. */}
        {backtest.status === 'running' ? <><progress aria-label="Replaying" />{' '}</> : null}
        {progress.replayed} replayed, {progress.skipped} skipped, {progress.evaluations} read
      </dd>
      {backtest.report ? null : (
        <>
          <dt>Range</dt>
          <dd><Time at={backtest.since} /> to <Time at={backtest.until} /></dd>
        </>
      )}
      <dt>Started</dt>
      <dd><Time at={backtest.created_at} /> by <code>{backtest.created_by}</code>{backtest.finished_at ? <>, ended <Time at={backtest.finished_at} /></> : null}</dd>
      {backtest.rule_set_version !== null ? (
        <>
          <dt>Version</dt>
          <dd><StoredVersion account={account} eventType={eventType} version={backtest.rule_set_version} /></dd>
        </>
      ) : null}
    </dl>
  );
}

const STATUS_TEXT: Record<Summary['status'], string> = {
  running: 'Running',
  done: 'Done',
  failed: 'Failed: no report.',
  cancelled: 'Cancelled: no report.',
};

/** Whether the version tested is still stored (a discarded draft is not): the rule file tested is kept with the backtest either way. */
function StoredVersion({ account, eventType, version }: { account: string; eventType: string; version: number }) {
  const stored = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}/versions/{version}', { params: { path: { account, event_type: eventType, version } } })), [account, eventType, version]);
  if (stored.error?.status === 404) return <span>{version}: <strong>no longer stored</strong> (a discarded draft, say); the rule file it tested is kept below.</span>;
  if (stored.data) return <span>{version} ({stored.data.status}{stored.data.comment ? `: ${stored.data.comment}` : ''})</span>;
  return <span>{version}</span>;
}
