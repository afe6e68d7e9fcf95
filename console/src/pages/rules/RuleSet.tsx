import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiProblem, ok, type FieldError } from '../../api/client';
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
import { changedIds, NO_EDITS, parameterProblem, ruleToWrite, savedRow, savedThresholds, unsavedCount, writtenId, type DraftEdits, type RowValues, type ThresholdValues } from './draft-edits';
import { DraftRulesTable, parametersOf, RulesTable, Thresholds } from './RulesTable';
import { Shadow } from './Shadow';
import { typedNumber, type LibraryRule, type RuleSetDetail, type Version, type WrittenRule } from './types';

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
  const [yamlDirty, setYamlDirty] = useState(false);
  const [confirm, setConfirm] = useState<'publish' | 'discard' | undefined>();
  const [comment, setComment] = useState('');
  const path = { account: account!, event_type: eventType };
  const library = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rules/library', { params: { path: { account: account! } } })), [account]);
  // Editing starts from the draft, or from the live version (the first change makes the draft).
  const base = draft ?? set.published;
  // The edits not saved yet, kept across reloads (a rule added or removed) until saved or discarded.
  const [edits, setEdits] = useState<DraftEdits>(NO_EDITS);
  const [sent, setSent] = useState<DraftEdits>(NO_EDITS);
  // Saved as this text: the edits stay on screen until the page shows it (no flash of the old values).
  const [savedAs, setSavedAs] = useState<string | null>(null);
  // The text the save was made on: a page still showing it has not reloaded yet.
  const [savedFrom, setSavedFrom] = useState<string | null>(null);
  useEffect(() => {
    // Shows the saved text, or a newer one (someone saved over it meanwhile: what is stored now).
    if (savedAs === null || base === undefined || base === null || base.yaml_sha256 === savedFrom) return;
    setEdits(NO_EDITS);
    setSent(NO_EDITS);
    setSavedAs(null);
  }, [base]);
  const unsaved = base && savedAs === null ? unsavedCount(edits, base) : 0;
  useUnsavedEdits(unsaved > 0);
  const save = useAction(async () => {
    const body = base ? saveBody(base, edits, library.data?.rules) : null;
    if (!body) return;
    setSent(edits);
    setSavedFrom(base!.yaml_sha256);
    if (body.refused.length > 0) throw new ApiProblem(400, 'invalid_request', 'Not saved', 'Fix the marked values first', body.refused);
    try {
      const saved = await ok(api.PATCH('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft', { params: { path }, body: body.patch }));
      setSavedAs(saved.yaml_sha256);
    } catch (error) {
      // 409: someone changed the draft meanwhile: show what is stored now, the edits still over it.
      if (asProblem(error).status === 409) reload();
      throw error;
    }
    reload();
  });
  const saveAll = async () => {
    await save.run();
    // Refused: to the first control the refusal names.
    setTimeout(() => (document.querySelector('[aria-invalid="true"][name^="rules."], [aria-invalid="true"][name^="thresholds."]') as HTMLElement | null)?.focus());
  };
  const editRow = (id: string, values: RowValues | null) => {
    const rules = { ...edits.rules };
    if (values) rules[id] = values;
    else delete rules[id];
    setEdits({ ...edits, rules });
  };
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
    setEdits(NO_EDITS);
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
    setEdits(NO_EDITS);
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
  // Closing the YAML editor drops what was typed in it: asked first, as leaving the page is.
  const toggleYaml = () => {
    if (yamlOpen && yamlDirty && !window.confirm('Close the YAML editor? Your changes to the YAML that are not saved will be lost.')) return;
    if (yamlOpen) setYamlDirty(false);
    setYamlOpen(!yamlOpen);
  };

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
          <SaveBar unsaved={unsaved} busy={save.busy || savedAs !== null} problem={save.error} base={base}
            onSave={() => void saveAll()} onDiscard={() => { setEdits(NO_EDITS); setSent(NO_EDITS); save.clear(); }} />
          <ThresholdsForm version={base} edited={edits.thresholds} sent={sent.thresholds} problem={save.error}
            onEdit={(thresholds) => setEdits({ ...edits, thresholds })} />
          <h2>Rules</h2>
          <DraftRulesTable account={account!} eventType={eventType} draft={base} library={library.data?.rules} edits={edits.rules} sent={sent.rules} problem={save.error}
            onEdit={editRow} onChanged={reload} />
          <div class="yaml-toggle">
            <button type="button" aria-expanded={yamlOpen} onClick={toggleYaml}>{yamlOpen ? 'Close the YAML editor' : 'Edit the YAML'}</button>
          </div>
          {yamlOpen ? <LazyYamlEditor eventType={eventType} version={base} onSaved={reload} onDirty={setYamlDirty} /> : <RuleFile version={base} />}
        </>
      ) : null}
      {draft ? <DraftDiff eventType={eventType} draft={draft} /> : null}

      {confirm === 'publish' && draft ? (
        <Confirm title={`Publish draft version ${draft.version} of ${eventType}?`} action="Publish" busy={publish.busy} problem={unplaced(publish.error, (p) => p === 'comment')}
          onCancel={() => { setConfirm(undefined); publish.clear(); }} onConfirm={() => void publish.run()}>
          <p>It becomes the live version at once: the next evaluation of {eventType} is scored with it, on every replica within a few seconds. The version it replaces stays in the history, to roll back to.</p>
          {unsaved > 0 ? <p class="problem">{changeCount(unsaved)} not saved: {unsaved === 1 ? 'it is' : 'they are'} not in this version, and {unsaved === 1 ? 'is' : 'are'} lost on publishing. Cancel and save the draft first to include {unsaved === 1 ? 'it' : 'them'}.</p> : null}
          <Field label="Comment (required)" value={comment} onInput={(e) => setComment(e.currentTarget.value)} hint="What changed and why: the history shows it." error={publish.error?.field('comment')} />
        </Confirm>
      ) : null}
      {confirm === 'discard' && draft ? (
        <Confirm title={`Discard draft version ${draft.version}?`} action="Discard draft" busy={discard.busy} problem={discard.error}
          onCancel={() => { setConfirm(undefined); discard.clear(); }} onConfirm={() => void discard.run()}>
          <p>Every change in it is lost{unsaved > 0 ? ', and the changes not saved yet' : ''}. The live version is untouched.</p>
        </Confirm>
      ) : null}
    </section>
  );
}

const changeCount = (n: number) => `${n} change${n === 1 ? '' : 's'}`;

/** Where a problem the API named is in the page, for the list under Save. */
function problemLabel(path: string): string {
  const rule = /^rules\.([^.]+)\.(.+)$/.exec(path);
  if (rule) return `${rule[1]}, ${rule[2]!.replace(/^params\./, '')}`;
  return path.startsWith('thresholds.') ? `Thresholds, ${path.slice('thresholds.'.length)}` : path;
}

/**
 * The draft's one Save: how many changes are not saved, Save and Discard. A refused save lists its
 * problems, each a button to the control it is about (focus goes to the first on its own).
 */
function SaveBar({ unsaved, busy, problem, base, onSave, onDiscard }: { unsaved: number; busy: boolean; problem: ApiProblem | undefined; base: Version; onSave: () => void; onDiscard: () => void }) {
  const control = (path: string) => document.querySelector(`[name="${CSS.escape(path)}"]`) as HTMLElement | null;
  const placed = problem?.errors.filter((e) => control(e.path)) ?? [];
  return (
    <div class="save-bar" role="region" aria-label="Unsaved changes">
      <p role="status" class={unsaved > 0 ? 'unsaved-count' : 'muted'}>
        {unsaved > 0 ? `${changeCount(unsaved)} not saved` : base.status === 'draft' ? 'All changes saved.' : 'No changes yet.'}
      </p>
      <div class="actions">
        <button type="button" class="primary" disabled={unsaved === 0 || busy} onClick={onSave}>Save the draft</button>
        <button type="button" disabled={unsaved === 0 || busy} onClick={onDiscard}>Discard unsaved changes</button>
      </div>
      {problem ? (
        <div class="problem" role="alert">
          <strong>Not saved: {problem.errors.length > 0 ? `${problem.errors.length} problem${problem.errors.length === 1 ? '' : 's'}` : problem.detail || problem.title}</strong>
          {placed.length > 0 ? (
            <ul>{placed.map((e) => <li key={e.path}><button type="button" class="link" onClick={() => control(e.path)?.focus()}>{problemLabel(e.path)}</button>: {e.message}</li>)}</ul>
          ) : null}
          {placed.length < problem.errors.length ? <ProblemMessage problem={unplaced(problem, (p) => placed.some((e) => e.path === p))} /> : null}
        </div>
      ) : null}
    </div>
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

/** The thresholds, edited with the rest of the draft (its one Save sends them). */
function ThresholdsForm({ version, edited, sent, problem, onEdit }: { version: Version; edited: ThresholdValues | null; sent: ThresholdValues | null; problem: ApiProblem | undefined; onEdit: (values: ThresholdValues | null) => void }) {
  const saved = savedThresholds(version);
  const values = edited ?? saved;
  const set = (change: Partial<ThresholdValues>) => {
    const next = { ...values, ...change };
    onEdit(next.review === saved.review && next.decline === saved.decline ? null : next);
  };
  // The API's message while the values are those sent (review above decline names review).
  const error = (field: keyof ThresholdValues) => (sent && values.review === sent.review && values.decline === sent.decline ? problem?.field(`thresholds.${field}`) : undefined);
  return (
    <div class={`inline-form thresholds-form${edited ? ' row-unsaved' : ''}`}>
      <h2>Thresholds{edited ? <span class="unsaved-mark"> unsaved</span> : null}</h2>
      <Field label="Review from" name="thresholds.review" type="number" min={0} max={100} step={1} value={values.review} onInput={(e) => set({ review: e.currentTarget.value })} error={error('review')} />
      <Field label="Decline from" name="thresholds.decline" type="number" min={0} max={100} step={1} value={values.decline} onInput={(e) => set({ decline: e.currentTarget.value })} error={error('decline')} />
    </div>
  );
}

/**
 * The body of the one Save: each changed rule as it will be written, the thresholds if changed, and
 * the text they were made on (a 409 if it changed since). `refused`: parameters out of their
 * bounds, refused before sending, at the paths the API would name.
 */
function saveBody(base: Version, edits: DraftEdits, library: LibraryRule[] | undefined) {
  const rules: Record<string, WrittenRule> = {};
  const refused: FieldError[] = [];
  for (const id of changedIds(edits, base)) {
    const rule = base.rules.find((r) => r.id === id)!;
    const written = base.rule_set?.rules.find((w) => writtenId(w) === id);
    if (!written) continue;
    const parameters = parametersOf(library, rule);
    const values = edits.rules[id]!;
    for (const p of parameters) {
      const message = parameterProblem(p, values.params[p.name]!);
      if (message) refused.push({ path: `rules.${id}.params.${p.name}`, message });
    }
    rules[id] = ruleToWrite(rule, written, parameters, values, savedRow(rule, written, parameters));
  }
  const thresholds = edits.thresholds ? { review: typedNumber(edits.thresholds.review), decline: typedNumber(edits.thresholds.decline) } : undefined;
  return { refused, patch: { rules, ...(thresholds ? { thresholds } : {}), yaml_sha256: base.yaml_sha256 } };
}
