import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { Field, Loading, Page, ProblemMessage, Time } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import { href, navigate } from '../../router';
import { useSession } from '../../session';
import { Author, AuthorNames } from './authors';
import { BacktestView } from './Backtest';
import { unplaced } from './problems';
import { RuleSetPage } from './RuleSet';
import { RulesTable, Thresholds } from './RulesTable';
import { byCardOrder } from './types';

/**
 * Threat rules: one card per event type. Routes under it: `rules/<event_type>` (one rule set) and
 * `rules/<event_type>/backtest[/<backtest_id>]` (backtests of its drafts).
 */
export function ThreatRules({ rest }: { rest: string[] }) {
  const { account } = useSession();
  const [eventType, view, id] = rest;
  if (account === undefined) return <Page title="Threat rules"><p>There is no account yet: rules belong to an account. Create one in Getting started.</p></Page>;
  if (eventType && view === 'backtest') return <BacktestView eventType={eventType} backtestId={id} />;
  return <AuthorNames>{eventType ? <RuleSetPage key={eventType} eventType={eventType} /> : <Overview />}</AuthorNames>;
}

function Overview() {
  const { account, role } = useSession();
  const sets = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rule-sets', { params: { path: { account: account! } } })), [account]);
  const eventTypes = (sets.data?.rule_sets ?? []).map((s) => s.event_type).sort(byCardOrder);
  return (
    <Page title="Threat rules" intro="Each event type your backend sends (a sign-up, a login…) has its own rules. Every rule that fires adds its score; the total is compared with two thresholds: below the review threshold the event is approved, from it the event goes to review, and from the decline threshold it is declined. Changes go to a draft and take effect only when it is published.">
      {sets.loading && !sets.data ? <Loading what="rule sets" /> : null}
      <ProblemMessage problem={sets.error} />
      <div class="rule-cards">
        {eventTypes.map((eventType) => <RuleSetCard key={eventType} account={account!} eventType={eventType} />)}
      </div>
      {sets.data && eventTypes.length === 0 ? <p>No event type yet.</p> : null}
      {role === 'admin' && sets.data ? <NewEventType account={account!} existing={eventTypes} /> : null}
    </Page>
  );
}

function RuleSetCard({ account, eventType }: { account: string; eventType: string }) {
  const set = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}', { params: { path: { account, event_type: eventType } } })), [account, eventType]);
  const live = set.data?.published;
  const draft = set.data?.draft;
  const headingId = `card-${eventType}`;
  return (
    <section class="card rule-card" aria-labelledby={headingId}>
      <h2 id={headingId}>
        <a href={href(account, 'rules', eventType)}>{eventType}</a>
      </h2>
      {set.loading && !set.data ? <Loading what={`the ${eventType} rules`} /> : null}
      <ProblemMessage problem={set.error} />
      {set.data && !live ? <p class="muted">Nothing published yet: evaluations of this event type are refused.</p> : null}
      {live ? (
        <>
          <p class="version-line">
            Live: <strong>version {live.version}</strong>, published <Time at={live.published_at} /> by <Author id={live.author} />
            {live.comment ? <>: <q>{live.comment}</q></> : null}
          </p>
          <Thresholds thresholds={live.thresholds} />
          <RulesTable rules={live.rules} caption={`Live rules of ${eventType}`} />
        </>
      ) : null}
      {draft ? (
        <p class="draft-note">
          Draft version {draft.version} in progress, changed <Time at={draft.created_at} /> by <Author id={draft.author} />.
        </p>
      ) : set.data ? <p class="muted">No draft.</p> : null}
      <a class="button-link" href={href(account, 'rules', eventType)}>Open {eventType}</a>
    </section>
  );
}

/**
 * Admins add an event type: a copy of another's live rules, the rules shipped for one (RULES_DIR:
 * the API's message lists them when the one chosen has none), or no rules.
 */
function NewEventType({ account, existing }: { account: string; existing: string[] }) {
  const [eventType, setEventType] = useState('');
  const [from, setFrom] = useState<'copy' | 'default' | 'empty'>('copy');
  const [source, setSource] = useState(existing[0] ?? '');
  const create = useAction(async () => {
    const start = from === 'empty' ? { kind: from } : { kind: from, event_type: source };
    const made = await ok(api.POST('/admin/v1/accounts/{account}/rule-sets', { params: { path: { account } }, body: { event_type: eventType, from: start } }));
    navigate(href(account, 'rules', made.event_type));
  });
  const sourceError = create.error?.field('from.event_type');
  const placed = from === 'empty' ? ['event_type'] : ['event_type', 'from.event_type'];
  return (
    <form class="card inline-form" aria-labelledby="add-event-type" onSubmit={(e) => { e.preventDefault(); void create.run(); }}>
      <h2 id="add-event-type">Add an event type</h2>
      <p class="muted form-note">Version 1 is published at once: the evaluate endpoint accepts the new event type from its next request.</p>
      <Field label="Event type" required value={eventType} onInput={(e) => setEventType(e.currentTarget.value)} hint="Letters, digits, _ and -, e.g. checkout." error={create.error?.field('event_type')} />
      <div class="field">
        <label for="new-set-from">Start with</label>
        <select id="new-set-from" value={from} onChange={(e) => setFrom(e.currentTarget.value as typeof from)}>
          <option value="copy">a copy of the live rules of</option>
          <option value="default">the rules shipped for</option>
          <option value="empty">no rules</option>
        </select>
      </div>
      {from === 'empty' ? null : (
        <div class="field">
          <label for="new-set-source">From event type</label>
          <select id="new-set-source" value={source} onChange={(e) => setSource(e.currentTarget.value)}
            aria-invalid={sourceError ? true : undefined} aria-describedby={sourceError ? 'new-set-source-error' : undefined}>
            {existing.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
          {sourceError ? <small id="new-set-source-error" class="field-error">{sourceError}</small> : null}
        </div>
      )}
      <button type="submit" class="primary" disabled={create.busy}>Add event type</button>
      <ProblemMessage problem={unplaced(create.error, (path) => placed.includes(path))} />
    </form>
  );
}
