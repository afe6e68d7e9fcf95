import { useState } from 'preact/hooks';
import { api, ApiProblem, ok, type Answered } from '../../../api/client';
import { Confirm, Loading, ProblemMessage, Time } from '../../../components/ui';
import { useAction, useResource } from '../../../hooks';
import { useSession } from '../../../session';
import { RangeFields, rangeOf, type Range } from './RangeFields';
import { ReportView } from './Report';
import { VersionSelect } from './VersionSelect';

type Comparison = Answered<'compareRuleSetShadow'>;

const shadowPath = '/admin/v1/accounts/{account}/rule-sets/{event_type}/shadow';

/** The event type's shadow, or null when none runs (the API answers that with a 404). */
export function useShadow(account: string, eventType: string) {
  return useResource(async () => {
    try {
      return await ok(api.GET(shadowPath, { params: { path: { account, event_type: eventType } } }));
    } catch (error) {
      if (error instanceof ApiProblem && error.status === 404) return null;
      throw error;
    }
  }, [account, eventType]);
}

/**
 * The event type's shadow: the version scored beside the live set on every request (logged, never
 * answered). Admins start one from a version (the draft by default) and stop it; everyone compares
 * live with shadow over a time range, as a backtest's report.
 */
export function Shadow({ account, eventType }: { account: string; eventType: string }) {
  const { role } = useSession();
  const path = { account, event_type: eventType };
  const shadow = useShadow(account, eventType);
  const [version, setVersion] = useState<number | undefined>();
  const [stopping, setStopping] = useState(false);
  const start = useAction(async () => {
    await ok(api.POST(shadowPath, { params: { path }, body: { version } }));
    shadow.reload();
  });
  const stop = useAction(async () => {
    await ok(api.DELETE(shadowPath, { params: { path } }));
    setStopping(false);
    shadow.reload();
  });
  const running = shadow.data;

  return (
    <section class="card" aria-labelledby="shadow-heading">
      <h2 id="shadow-heading">Shadow</h2>
      <p class="muted">A version in shadow is scored beside the live rules on every {eventType} request, on the same facts; its outcome is logged, never answered.</p>
      {shadow.loading && shadow.data === undefined ? <Loading what="the shadow" /> : null}
      <ProblemMessage problem={shadow.error} />
      {running === null ? <p>No version runs in shadow.</p> : null}
      {running ? (
        <p>
          <strong>Version {running.version}</strong> runs in shadow since <Time at={running.started_at} />, started by <code>{running.started_by}</code>.
          {role === 'admin' ? <> <button type="button" class="danger" onClick={() => setStopping(true)}>Stop shadow</button></> : null}
        </p>
      ) : null}
      {role === 'admin' ? (
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void start.run(); }}>
          <VersionSelect account={account} eventType={eventType} label="Version to run in shadow" value={version} onChange={setVersion} error={start.error?.field('version')} />
          <button type="submit" disabled={start.busy || version === undefined}>{running ? 'Replace the shadow' : 'Run in shadow'}</button>
        </form>
      ) : null}
      <ProblemMessage problem={start.error?.errors.length ? undefined : start.error} />
      <Compare account={account} eventType={eventType} />
      {stopping && running ? (
        <Confirm title={`Stop the shadow of ${eventType}?`} action="Stop shadow" busy={stop.busy} problem={stop.error}
          onCancel={() => { setStopping(false); stop.clear(); }} onConfirm={() => void stop.run()}>
          <p>Version {running.version} is no longer scored beside the live rules from the next request (every replica within the reload interval). What it logged so far stays and can still be compared.</p>
        </Confirm>
      ) : null}
    </section>
  );
}

function Compare({ account, eventType }: { account: string; eventType: string }) {
  const [range, setRange] = useState<Range>({ preset: '24h', from: '', to: '' });
  const [comparison, setComparison] = useState<Comparison | undefined>();
  const compare = useAction(async () => {
    setComparison(await ok(api.GET(`${shadowPath}/comparison`, { params: { path: { account, event_type: eventType }, query: rangeOf(range) } })));
  });
  return (
    <>
      <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void compare.run(); }}>
        <h3>Live against shadow</h3>
        <RangeFields value={range} onChange={setRange} errors={compare.error} />
        <button type="submit" disabled={compare.busy}>Compare</button>
      </form>
      <ProblemMessage problem={compare.error?.errors.length ? undefined : compare.error} />
      {comparison ? (
        comparison.evaluations === 0 ? <p class="muted">No evaluation in this range was scored in shadow.</p> : (
          <>
            <p class="muted">
              Shadow versions compared: {comparison.shadow_versions.map((v) => `version ${v.version} (${v.evaluations})`).join(', ')}.
              {comparison.truncated ? ' The range holds more than one call compares: the report stops at its end time; compare again from there.' : ''}
            </p>
            <ReportView report={comparison} account={account} candidateName="shadow" />
          </>
        )
      ) : null}
    </>
  );
}
