import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { api, ok, type Answered } from '../../api/client';
import { BlockButton, EntityLink, PeopleNames, Person } from '../../components/entities';
import { Field, Loading, Page, ProblemMessage, ScrollingText, StateBadge, Time } from '../../components/ui';
import { UPlot } from '../../components/UPlot';
import { useAction, useResource } from '../../hooks';
import { href } from '../../router';
import { useSession } from '../../session';

type Detail = Answered<'getDecision'>;
type Outcome = NonNullable<Detail['rule_outcomes']>[number];
type Evidence = Outcome['evidence'][number];

const json = (value: unknown) => JSON.stringify(value, null, 2);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One decision: why it scored what it did (each rule, its points, the facts it read), what could not be checked, the facts, the label. */
export function DecisionDetail({ id }: { id: string }) {
  const { account } = useSession();
  const decision = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/decisions/{id}', { params: { path: { account: account!, id } } })), [account, id]);
  const d = decision.data;
  return (
    <Page title="Decision">
      <p><a href={href(account!, 'decisions')}>← All decisions</a></p>
      <ProblemMessage problem={decision.error} />
      {!d && decision.loading ? <Loading what="the decision" /> : null}
      {d ? (
        <PeopleNames>
          <Summary d={d} />
          <LabelCard d={d} onChanged={decision.reload} />
          <Explanation d={d} />
          <Unavailable d={d} />
          <Facts d={d} />
          <section class="card" aria-labelledby="raw">
            <h2 id="raw">Request and answer</h2>
            <details><summary>The request as received</summary><ScrollingText label="The request as received">{json(d.request)}</ScrollingText></details>
            <details><summary>The answer as sent</summary><ScrollingText label="The answer as sent">{json(d.response)}</ScrollingText></details>
          </section>
        </PeopleNames>
      ) : null}
    </Page>
  );
}

function Summary({ d }: { d: Detail }) {
  const { account } = useSession();
  return (
    <section class="card decision-summary" aria-labelledby="summary">
      <h2 id="summary"><StateBadge state={d.state} />, score {d.score}</h2>
      <dl class="facts">
        <dt>Evaluated</dt><dd><Time at={d.evaluated_at} /> <span class="muted mono">{d.id}</span></dd>
        <dt>Event type</dt><dd><code>{d.event_type}</code></dd>
        <dt>E-mail address</dt><dd><EntityLink kind="email" value={d.email} /> (domain <EntityLink kind="domain" value={d.email_domain} />)</dd>
        <dt>IP address</dt><dd><EntityLink kind="ip" value={d.ip} /></dd>
        <dt>User</dt><dd>{d.user_id ? <EntityLink kind="user" value={d.user_id} /> : <span class="muted">not sent</span>}</dd>
        <dt>Device</dt><dd>{d.device_hash ? <EntityLink kind="device" value={d.device_hash} /> : <span class="muted">not sent</span>}</dd>
        <dt>Rule set</dt><dd>{d.rule_set ? <>version {d.rule_set.version} of <code>{d.rule_set.event_type}</code></> : <span class="muted">unknown</span>}</dd>
        <dt>User's previous event</dt>
        <dd>{d.previous_user_evaluation ? <a href={href(account!, 'decisions', d.previous_user_evaluation)}>the decision before this one</a> : <span class="muted">{d.user_id ? 'none in the log' : 'no user sent'}</span>}</dd>
        {d.shadow ? <><dt>Shadow</dt><dd>version {d.shadow.version} would have said <StateBadge state={d.shadow.state} />, score {d.shadow.fraud_score} (not answered)</dd></> : null}
      </dl>
      <div class="actions wrap-actions" aria-label="Block">
        {d.device_hash ? <BlockButton kind="device" value={d.device_hash} /> : null}
        <BlockButton kind="ip" value={d.ip} />
        <BlockButton kind="email" value={d.email} />
        {d.user_id ? <BlockButton kind="user" value={d.user_id} /> : null}
      </div>
    </section>
  );
}

function LabelCard({ d, onChanged }: { d: Detail; onChanged: () => void }) {
  const { account } = useSession();
  const [reason, setReason] = useState('');
  const path = { account: account!, id: d.id };
  const set = useAction(async (label: 'fraud' | 'legit') => {
    await ok(api.PUT('/admin/v1/accounts/{account}/decisions/{id}/label', { params: { path }, body: reason.trim() ? { label, reason: reason.trim() } : { label } }));
    setReason('');
    onChanged();
  });
  const remove = useAction(async () => {
    await ok(api.DELETE('/admin/v1/accounts/{account}/decisions/{id}/label', { params: { path } }));
    onChanged();
  });
  const l = d.labelled;
  return (
    <section class="card" aria-labelledby="label">
      <h2 id="label">Label</h2>
      <p role="status">
        {l ? <>Labelled <span class={l.label === 'fraud' ? 'state bad' : 'state ok'}>{l.label}</span> by <Person actor={l.author} />, <Time at={l.labelled_at} />{l.reason ? <>: “{l.reason}”</> : null}.</>
          : <span class="muted">Not labelled. Labels feed backtests (precision and recall) and the list of what was fraud.</span>}
      </p>
      <div class="inline-form">
        <Field label="Reason (optional)" value={reason} maxLength={500} onInput={(e) => setReason(e.currentTarget.value)} error={set.error?.field('reason')} />
        <button type="button" class="danger" disabled={set.busy} onClick={() => void set.run('fraud')}>Label fraud</button>
        <button type="button" disabled={set.busy} onClick={() => void set.run('legit')}>Label legit</button>
        {l ? <button type="button" disabled={remove.busy} onClick={() => void remove.run()}>Remove label</button> : null}
      </div>
      <ProblemMessage problem={set.error ?? remove.error} />
    </section>
  );
}

function reading(e: Evidence) {
  if (e.reading === 'absent') return <span class="muted">not sent</span>;
  if (e.reading === 'unknown') return <span class="state warn">unknown{e.unavailable ? ` (${e.unavailable} could not be checked)` : ''}</span>;
  return <code class="value">{JSON.stringify(e.value)}</code>;
}

/** The comparison the rule made: `fires at ≥ 5` when the fact is all it read, `needs ≥ 5` as one part of several. */
const comparison = (e: Evidence, alone: boolean) => (e.condition ? <span class="muted">, {alone ? 'fires at' : 'needs'} <code>{e.condition}</code></span> : null);

/** The score and the band it fell in: `30: review from 20` (approve below `review`, decline from `decline`). */
export function band(score: number, thresholds: { review: number; decline: number }): string {
  if (score >= thresholds.decline) return `${score}: decline from ${thresholds.decline}`;
  if (score >= thresholds.review) return `${score}: review from ${thresholds.review} (decline from ${thresholds.decline})`;
  return `${score}: approve below ${thresholds.review}`;
}

function Explanation({ d }: { d: Detail }) {
  const outcomes = d.rule_outcomes;
  const fired = outcomes?.filter((o) => o.outcome === 'fired') ?? [];
  const rest = outcomes?.filter((o) => o.outcome !== 'fired') ?? [];
  const row = (o: Outcome) => (
    <tr key={o.id} class={o.outcome === 'fired' ? 'fired' : undefined}>
      <th scope="row">{o.name} <code class="muted">{o.id}</code>{o.mode !== 'live' ? <span class="badge">{o.mode === 'dry_run' ? 'dry run' : 'off'}</span> : null}</th>
      <td>{o.outcome === 'fired' ? <span class="state bad">fired</span> : o.outcome === 'unknown' ? <span class="state warn">unknown</span> : <span class="muted">did not fire</span>}</td>
      <td class="num">{o.points > 0 ? `+${o.points}` : o.points}</td>
      <td><ul class="evidence">{o.evidence.map((e, i) => <li key={i}><code>{e.field}</code> = {reading(e)}{comparison(e, o.evidence.length === 1)}</li>)}</ul></td>
    </tr>
  );
  return (
    <section class="card" aria-labelledby="why">
      <h2 id="why">Why this score</h2>
      <p class="muted">{d.replay.detail}{d.replay.differences.length > 0 ? `: ${d.replay.differences.join('; ')}` : ''}</p>
      {outcomes ? (
        <div class="table-scroll"><table>
          <thead><tr><th scope="col">Rule</th><th scope="col">Outcome</th><th scope="col" class="num">Points</th><th scope="col">Facts it read</th></tr></thead>
          <tbody>
            {fired.map(row)}
            {fired.length === 0 ? <tr><td colSpan={4} class="muted">No rule fired.</td></tr> : null}
            <tr class="total"><th scope="row">Score (the sum, within 0–100)</th><td /><td class="num"><strong>{d.score}</strong></td><td>{d.thresholds ? band(d.score, d.thresholds) : <span class="muted">bands unknown (the version is gone)</span>}</td></tr>
          </tbody>
          {rest.length > 0 ? (
            <tbody>
              <tr><th scope="rowgroup" colSpan={4} class="group">Rules that did not fire, and why</th></tr>
              {rest.map(row)}
            </tbody>
          ) : null}
        </table></div>
      ) : null}
    </section>
  );
}

function Unavailable({ d }: { d: Detail }) {
  return (
    <section class="card" aria-labelledby="unavailable">
      <h2 id="unavailable">What could not be checked</h2>
      {d.unavailable.length === 0 ? <p class="muted">Every check ran.</p> : (
        <>
          <p>These checks could not run, so no rule fired on them (unknown is not clean):</p>
          <ul>{d.unavailable.map((u) => <li key={u}><code>{u}</code></li>)}</ul>
        </>
      )}
    </section>
  );
}

/** A section of the answer (ip, email, history…) as facts: scalar values as text, nested objects one level down. */
function FactList({ value }: { value: Record<string, unknown> }) {
  return (
    <dl class="facts">
      {Object.entries(value).map(([name, v]) => (
        <Fragment key={name}>
          <dt>{name}</dt>
          <dd class="wrap">{isRecord(v) ? <FactList value={v} /> : v === null ? <span class="muted">unknown</span> : Array.isArray(v) ? (v.length ? v.map(String).join(', ') : <span class="muted">none</span>) : String(v)}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

function Facts({ d }: { d: Detail }) {
  const response = d.response;
  const ip = isRecord(response.ip) ? response.ip : undefined;
  const latitude = typeof ip?.latitude === 'number' ? ip.latitude : null;
  const longitude = typeof ip?.longitude === 'number' ? ip.longitude : null;
  return (
    <section class="card" aria-labelledby="facts">
      <h2 id="facts">Facts</h2>
      <div class="fact-columns">
        {ip ? (
          <div>
            <h3>IP address</h3>
            {latitude !== null && longitude !== null ? <Position latitude={latitude} longitude={longitude} radius={typeof ip.accuracy_radius_km === 'number' ? ip.accuracy_radius_km : null} /> : <p class="muted">Position unknown.</p>}
            <FactList value={ip} />
          </div>
        ) : null}
        {isRecord(response.email) ? <div><h3>E-mail address</h3><FactList value={response.email} /></div> : null}
        {isRecord(response.history) ? <div><h3>History</h3><FactList value={response.history} /></div> : <div><h3>History</h3><p class="muted">No history in this answer (none kept, or the store was unavailable).</p></div>}
      </div>
    </section>
  );
}

/**
 * Where the IP address's location is, on a longitude/latitude frame drawn by uPlot (no map tiles:
 * the console fetches nothing from elsewhere), with the coordinates and accuracy as text.
 */
function Position({ latitude, longitude, radius }: { latitude: number; longitude: number; radius: number | null }) {
  const degrees = (_u: uPlot, splits: number[]) => splits.map((v) => `${v}°`);
  return (
    <figure class="position">
      <UPlot label={`Position: latitude ${latitude}, longitude ${longitude}`} deps={[latitude, longitude]} make={() => [{
        width: 400, height: 200,
        legend: { show: false }, cursor: { show: false },
        scales: { x: { time: false, range: [-180, 180] }, y: { range: [-90, 90] } },
        axes: [
          { splits: () => [-180, -120, -60, 0, 60, 120, 180], values: degrees, size: 28 },
          { splits: () => [-90, -45, 0, 45, 90], values: degrees, size: 44 },
        ],
        series: [{}, { stroke: '#b91c1c', fill: '#b91c1c', paths: () => null, points: { show: true, size: 10, fill: '#b91c1c' } }],
      }, [[longitude], [latitude]]]} />
      <figcaption>{latitude.toFixed(4)}, {longitude.toFixed(4)}{radius !== null ? ` (within ${radius} km)` : ''}</figcaption>
    </figure>
  );
}
