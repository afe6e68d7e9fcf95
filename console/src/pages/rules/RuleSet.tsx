import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { Confirm, Field, Loading, Page, ProblemMessage, ScrollingText, Time } from '../../components/ui';
import { asProblem, useAction, useResource } from '../../hooks';
import { confirmLeave, href, useUnsavedEdits } from '../../router';
import { useSession } from '../../session';
import { Author } from './authors';
import { CustomRuleEditor } from './CustomRuleEditor';
import { DraftDiff } from './VersionDiff';
import { DryRun } from './DryRun';
import { History } from './History';
import { LibraryPicker } from './LibraryPicker';
import { unplaced } from './problems';
import { DraftRulesTable, RulesTable, Thresholds } from './RulesTable';
import { Shadow } from './Shadow';
import { typedNumber, type RuleSetDetail, type Version } from './types';

type Tab = 'draft' | 'live' | 'dry-run' | 'history';
const TABS: { id: Tab; label: string }[] = [
  { id: 'live', label: 'Live' },
  { id: 'draft', label: 'Draft' },
  { id: 'dry-run', label: 'Dry run' },
  { id: 'history', label: 'History' },
];

/**
 * One event type's rules: the live version, the draft an admin edits (library rules, custom rules,
 * thresholds, the diff against live, publish, discard), a dry run, and the history with rollback.
 * Analysts see the same, with no control that changes anything.
 */
export function RuleSetPage({ eventType }: { eventType: string }) {
  const { account, role } = useSession();
  const admin = role === 'admin';
  const path = { account: account!, event_type: eventType };
  const set = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}', { params: { path } })), [account, eventType]);
  const [tab, setTab] = useState<Tab | undefined>();
  const shown: Tab = tab ?? (set.data?.draft ? 'draft' : 'live');

  // Leaving the draft's tab unmounts its unsaved edits.
  const choose = (next: Tab) => {
    if (next === shown || shown !== 'draft' || confirmLeave()) setTab(next);
  };
  const select = (next: Tab) => {
    choose(next);
    document.getElementById(`tab-${next}`)?.focus();
  };
  const onTabKey = (e: KeyboardEvent) => {
    const at = TABS.findIndex((t) => t.id === shown);
    if (e.key === 'ArrowRight') select(TABS[(at + 1) % TABS.length]!.id);
    else if (e.key === 'ArrowLeft') select(TABS[(at + TABS.length - 1) % TABS.length]!.id);
    else if (e.key === 'Home') select(TABS[0]!.id);
    else if (e.key === 'End') select(TABS[TABS.length - 1]!.id);
    else return;
    e.preventDefault();
  };

  return (
    <Page title={`Threat rules: ${eventType}`}>
      <p class="breadcrumb"><a href={href(account!, 'rules')}>All event types</a></p>
      {set.loading && !set.data ? <Loading what="the rule set" /> : null}
      <ProblemMessage problem={set.error} />
      {set.data ? (
        <>
          <div role="tablist" aria-label={`Rules of ${eventType}`} class="tabs" onKeyDown={onTabKey}>
            {TABS.map((t) => (
              <button key={t.id} id={`tab-${t.id}`} type="button" role="tab" aria-selected={shown === t.id} aria-controls={`panel-${t.id}`}
                tabIndex={shown === t.id ? 0 : -1} onClick={() => choose(t.id)}>
                {t.label}
                {t.id === 'live' && set.data!.published ? ` (v${set.data!.published.version})` : null}
                {t.id === 'draft' && set.data!.draft ? ` (v${set.data!.draft.version})` : null}
              </button>
            ))}
          </div>
          <div role="tabpanel" id={`panel-${shown}`} aria-labelledby={`tab-${shown}`} class="tab-panel">
            {shown === 'live' ? <Live set={set.data} /> : null}
            {shown === 'draft' ? <Draft eventType={eventType} set={set.data} admin={admin} reload={set.reload} onPublished={() => { setTab('live'); set.reload(); }} /> : null}
            {shown === 'dry-run' ? <DryRun eventType={eventType} hasDraft={set.data.draft !== null} /> : null}
            {shown === 'history' ? <History eventType={eventType} admin={admin} live={set.data.published?.version} onRolledBack={set.reload} /> : null}
          </div>
        </>
      ) : null}
    </Page>
  );
}

function VersionLine({ version, what }: { version: Version; what: string }) {
  return (
    <p class="version-line">
      {what} <strong>version {version.version}</strong>, {version.published_at ? <>published <Time at={version.published_at} /></> : <>changed <Time at={version.created_at} /></>}{' '}
      by <Author id={version.author} />
      {version.comment ? <>: <q>{version.comment}</q></> : null}
    </p>
  );
}

function Problems({ version }: { version: Version }) {
  if (version.problems.length === 0) return null;
  return (
    <div class="problem" role="alert">
      <strong>This text no longer validates</strong>
      <ul>{version.problems.map((p) => <li key={`${p.path}:${p.line}`}><code>{p.path}</code>{p.line ? ` (line ${p.line})` : ''}: {p.message}</li>)}</ul>
    </div>
  );
}

/** The rule file as stored (what `npm run rules` exports, comments included). */
function RuleFile({ version }: { version: Version }) {
  return (
    <details class="rule-file">
      <summary>The rule file of version {version.version} (YAML)</summary>
      <ScrollingText label={`Rule file of version ${version.version}`}>{version.yaml}</ScrollingText>
    </details>
  );
}

function Live({ set }: { set: RuleSetDetail }) {
  const { account } = useSession();
  const live = set.published;
  const hits = useResource(
    () => (live ? ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}/hit-rates', { params: { path: { account: account!, event_type: set.event_type } } })) : Promise.resolve(null)),
    [account, set.event_type, live?.version],
  );
  if (!live) return <p class="muted">Nothing published yet.</p>;
  return (
    <section aria-label="Live version">
      <VersionLine version={live} what="Live:" />
      <Problems version={live} />
      <Thresholds thresholds={live.thresholds} />
      <ProblemMessage problem={hits.error} />
      <RulesTable rules={live.rules} caption={`Live rules of ${set.event_type}`} hits={hits.data?.version === live.version ? hits.data.windows : undefined} />
      <RuleFile version={live} />
    </section>
  );
}

function Draft({ eventType, set, admin, reload, onPublished }: { eventType: string; set: RuleSetDetail; admin: boolean; reload: () => void; onPublished: () => void }) {
  const { account } = useSession();
  const draft = set.draft;
  const [adding, setAdding] = useState<'library' | 'custom' | undefined>();
  const [yamlOpen, setYamlOpen] = useState(false);
  const [confirm, setConfirm] = useState<'publish' | 'discard' | undefined>();
  const [comment, setComment] = useState('');
  const path = { account: account!, event_type: eventType };
  const publish = useAction(async () => {
    try {
      await ok(api.POST('/admin/v1/accounts/{account}/rule-sets/{event_type}/publish', { params: { path }, body: { comment, yaml_sha256: draft!.yaml_sha256 } }));
    } catch (error) {
      // 409: the draft changed, or a version was published over it: show what is stored now.
      if (asProblem(error).status === 409) reload();
      throw error;
    }
    setConfirm(undefined);
    setComment('');
    onPublished();
  });
  const saveAgain = useAction(async () => {
    await ok(api.PUT('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft', { params: { path }, body: { yaml: draft!.yaml } }));
    reload();
  });
  // A version published after the draft was started (a rollback, an import): publishing it
  // would silently undo that one, so the API wants it saved again, after a look at the diff.
  const overtaken = draft && set.published && draft.version < set.published.version;
  const discard = useAction(async () => {
    await ok(api.DELETE('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft', { params: { path } }));
    setConfirm(undefined);
    reload();
  });
  // The library picker or the custom rule editor, closed (Close, or a rule added), gives focus back
  // to the button that opened it (a ref: the first change makes the draft, and Preact may render the button anew).
  const openers = { library: useRef<HTMLButtonElement>(null), custom: useRef<HTMLButtonElement>(null) };
  const close = () => {
    if (adding) setTimeout(() => openers[adding].current?.focus());
    setAdding(undefined);
  };
  const changed = () => {
    close();
    reload();
  };

  // Editing starts from the draft, or from the live version (the first change makes the draft).
  const base = draft ?? set.published;
  if (!admin) {
    if (!draft) return <p class="muted">No draft. Your role in this account is analyst: the account's admins change rules.</p>;
    return (
      <section aria-label="Draft">
        <VersionLine version={draft} what="Draft:" />
        <Problems version={draft} />
        <Shadow eventType={eventType} />
        <Thresholds thresholds={draft.thresholds} />
        <RulesTable rules={draft.rules} caption={`Rules of the draft of ${eventType}`} />
        <RuleFile version={draft} />
        <DraftDiff eventType={eventType} draft={draft} />
      </section>
    );
  }
  return (
    <section aria-label="Draft">
      {draft ? (
        <div class="draft-bar">
          <VersionLine version={draft} what="Draft:" />
          <div class="actions">
            <button type="button" class="primary" onClick={() => setConfirm('publish')}>Publish…</button>
            <button type="button" class="danger" onClick={() => setConfirm('discard')}>Discard draft…</button>
            <a class="button-link" href={href(account!, 'rules', eventType, 'backtest')}>Backtest this draft</a>
          </div>
        </div>
      ) : (
        // A <div> as the bar is: Preact then keeps the blocks below as they are when the first change makes the draft (focus stays on them).
        <div><p class="muted">No draft: the first change below starts one from the live version. The live rules change only when it is published.</p></div>
      )}
      {draft ? <Problems version={draft} /> : null}
      {overtaken ? (
        <div class="problem" role="status">
          <p>Version {set.published!.version} was published after this draft was started. Check the changes against live below, then save the draft again to make it publishable as the next version.</p>
          <button type="button" onClick={() => void saveAgain.run()} disabled={saveAgain.busy}>Save the draft again</button>
          <ProblemMessage problem={saveAgain.error} />
        </div>
      ) : null}
      <Shadow eventType={eventType} />
      <div class="actions">
        <button ref={openers.library} type="button" aria-expanded={adding === 'library'} onClick={() => setAdding(adding === 'library' ? undefined : 'library')}>Add from the library</button>
        <button ref={openers.custom} type="button" aria-expanded={adding === 'custom'} onClick={() => setAdding(adding === 'custom' ? undefined : 'custom')}>Write a custom rule</button>
      </div>
      {adding === 'library' ? <LibraryPicker eventType={eventType} present={(base?.rules ?? []).map((r) => r.id)} onAdded={changed} onClose={close} /> : null}
      {adding === 'custom' ? <CustomRuleEditor eventType={eventType} onAdded={changed} onClose={close} /> : null}
      {base ? (
        <>
          <ThresholdsForm key={base.yaml_sha256} eventType={eventType} version={base} onChanged={reload} />
          <h2>Rules</h2>
          <DraftRulesTable account={account!} eventType={eventType} draft={base} onChanged={reload} />
          <div class="yaml-toggle">
            <button type="button" aria-expanded={yamlOpen} onClick={() => setYamlOpen(!yamlOpen)}>{yamlOpen ? 'Close the YAML editor' : 'Edit the YAML'}</button>
          </div>
          {yamlOpen ? <LazyYamlEditor eventType={eventType} version={base} onSaved={reload} /> : <RuleFile version={base} />}
        </>
      ) : null}
      {draft ? <DraftDiff eventType={eventType} draft={draft} /> : null}

      {confirm === 'publish' && draft ? (
        <Confirm title={`Publish draft version ${draft.version} of ${eventType}?`} action="Publish" busy={publish.busy} problem={unplaced(publish.error, (p) => p === 'comment')}
          onCancel={() => { setConfirm(undefined); publish.clear(); }} onConfirm={() => void publish.run()}>
          <p>It becomes the live version at once: the next evaluation of {eventType} is scored with it, on every replica within a few seconds. The version it replaces stays in the history, to roll back to.</p>
          <Field label="Comment (required)" value={comment} onInput={(e) => setComment(e.currentTarget.value)} hint="What changed and why: the history shows it." error={publish.error?.field('comment')} />
        </Confirm>
      ) : null}
      {confirm === 'discard' && draft ? (
        <Confirm title={`Discard draft version ${draft.version}?`} action="Discard draft" busy={discard.busy} problem={discard.error}
          onCancel={() => { setConfirm(undefined); discard.clear(); }} onConfirm={() => void discard.run()}>
          <p>Every change in it is lost. The live version is untouched.</p>
        </Confirm>
      ) : null}
    </section>
  );
}

/**
 * The YAML editor, loaded when first opened: CodeMirror is some 115 KB gzipped, more than the rest
 * of the console, and most visits never open it.
 */
function LazyYamlEditor(props: Parameters<typeof import('./YamlEditor').YamlEditor>[0]) {
  const [loaded, setLoaded] = useState<typeof import('./YamlEditor') | null>(null);
  const [failed, setFailed] = useState<unknown>(null);
  useEffect(() => {
    import('./YamlEditor').then(setLoaded, setFailed);
  }, []);
  if (failed) return <ProblemMessage problem={asProblem(failed)} />;
  return loaded ? <loaded.YamlEditor {...props} /> : <Loading what="the YAML editor" />;
}

function ThresholdsForm({ eventType, version, onChanged }: { eventType: string; version: Version; onChanged: () => void }) {
  const { account } = useSession();
  const [review, setReview] = useState(String(version.thresholds?.review ?? ''));
  const [decline, setDecline] = useState(String(version.thresholds?.decline ?? ''));
  const save = useAction(async () => {
    await ok(api.PUT('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft/thresholds', {
      params: { path: { account: account!, event_type: eventType } },
      body: { review: typedNumber(review), decline: typedNumber(decline) },
    }));
    onChanged();
  });
  const unchanged = review === String(version.thresholds?.review ?? '') && decline === String(version.thresholds?.decline ?? '');
  useUnsavedEdits(!unchanged);
  return (
    <form class="inline-form thresholds-form" noValidate onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
      <h2>Thresholds</h2>
      <Field label="Review from" type="number" min={0} max={100} step={1} value={review} onInput={(e) => setReview(e.currentTarget.value)} error={save.error?.field('review')} />
      <Field label="Decline from" type="number" min={0} max={100} step={1} value={decline} onInput={(e) => setDecline(e.currentTarget.value)} error={save.error?.field('decline')} />
      <button type="submit" disabled={save.busy || unchanged}>Save thresholds</button>
      <ProblemMessage problem={unplaced(save.error, (p) => p === 'review' || p === 'decline')} />
    </form>
  );
}
