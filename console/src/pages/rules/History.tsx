import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { Confirm, Loading, ProblemMessage, ScrollingText, Time } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import { useSession } from '../../session';
import { Author } from './authors';
import type { VersionInfo } from './types';
import { VersionDiff } from './VersionDiff';

/**
 * Every version, newest first, with who made it, when and why: any one shown as its rule file, any
 * two compared (the rules that changed and the diff of their YAML); admins roll back to an earlier one.
 */
export function History({ eventType, admin, live, onRolledBack }: { eventType: string; admin: boolean; live: number | undefined; onRolledBack: () => void }) {
  const { account } = useSession();
  const path = { account: account!, event_type: eventType };
  const [before, setBefore] = useState<number | undefined>();
  const page = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}/versions', { params: { path, query: { before, limit: 50 } } })), [account, eventType, before]);
  const [target, setTarget] = useState<VersionInfo | undefined>();
  const [opened, setOpened] = useState<number | undefined>();
  const [pick, setPick] = useState<{ from?: number; to?: number }>({});
  const [compared, setCompared] = useState<{ from: number; to: number } | undefined>();
  const versions = page.data?.versions ?? [];
  // By default the newest version against the one before it.
  const from = pick.from ?? versions[1]?.version ?? versions[0]?.version;
  const to = pick.to ?? versions[0]?.version;
  const rollback = useAction(async (version: VersionInfo) => {
    await ok(api.POST('/admin/v1/accounts/{account}/rule-sets/{event_type}/rollback', { params: { path }, body: { version: version.version } }));
    setTarget(undefined);
    setBefore(undefined);
    page.reload();
    onRolledBack();
  });
  return (
    <section aria-label="History">
      {page.loading && !page.data ? <Loading what="the history" /> : null}
      <ProblemMessage problem={page.error} />
      {versions.length > 1 ? (
        <form class="inline-form compare-form" onSubmit={(e) => { e.preventDefault(); if (from !== undefined && to !== undefined) setCompared({ from, to }); }}>
          <VersionSelect label="Compare version" versions={versions} value={from} onChange={(v) => setPick({ ...pick, from: v })} />
          <VersionSelect label="with version" versions={versions} value={to} onChange={(v) => setPick({ ...pick, to: v })} />
          <button type="submit">Compare</button>
        </form>
      ) : null}
      {page.data ? (
        <table>
          <caption class="visually-hidden">Versions of {eventType}, newest first</caption>
          <thead><tr><th scope="col" class="num">Version</th><th scope="col">Status</th><th scope="col">By</th><th scope="col">Made</th><th scope="col">Published</th><th scope="col">Comment</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {page.data.versions.map((v) => (
              <tr key={v.version}>
                <td class="num">{v.version}</td>
                <td>{v.version === live ? <strong>live</strong> : v.status}</td>
                <td class="wrap"><Author id={v.author} /></td>
                <td><Time at={v.created_at} /></td>
                <td><Time at={v.published_at} empty="–" /></td>
                <td class="wrap">{v.comment ?? <span class="muted">none</span>}</td>
                <td class="row-actions">
                  <button type="button" aria-expanded={opened === v.version} onClick={() => setOpened(opened === v.version ? undefined : v.version)}
                    aria-label={`Show version ${v.version}`}>Show</button>
                  {admin && v.status === 'archived' ? <button type="button" onClick={() => setTarget(v)} aria-label={`Roll back to version ${v.version}`}>Roll back</button> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <div class="actions">
        {before !== undefined ? <button type="button" onClick={() => setBefore(undefined)}>Newest versions</button> : null}
        {page.data?.next_before ? <button type="button" onClick={() => setBefore(page.data!.next_before!)}>Older versions</button> : null}
      </div>
      {opened !== undefined ? <VersionText eventType={eventType} version={opened} /> : null}
      {compared ? <VersionDiff eventType={eventType} from={compared.from} to={compared.to} title={`Version ${compared.from} to version ${compared.to}`} /> : null}
      {target ? (
        <Confirm title={`Roll ${eventType} back to version ${target.version}?`} action={`Roll back to version ${target.version}`} busy={rollback.busy} problem={rollback.error}
          onCancel={() => { setTarget(undefined); rollback.clear(); }} onConfirm={() => void rollback.run(target)}>
          <p>Version {target.version}'s rules are published again as a new version and score the next evaluation of {eventType} (every replica within a few seconds). The live version {live} stays in the history. A draft, if there is one, is kept.</p>
        </Confirm>
      ) : null}
    </section>
  );
}

function VersionSelect({ label, versions, value, onChange }: { label: string; versions: VersionInfo[]; value: number | undefined; onChange: (version: number) => void }) {
  const id = `compare-${label.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(Number(e.currentTarget.value))}>
        {versions.map((v) => <option key={v.version} value={v.version}>{v.version} ({v.status})</option>)}
      </select>
    </div>
  );
}

/** One version's rule file, exactly as stored (comments included). */
function VersionText({ eventType, version }: { eventType: string; version: number }) {
  const { account } = useSession();
  const shown = useResource(
    () => ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}/versions/{version}', { params: { path: { account: account!, event_type: eventType, version } } })),
    [account, eventType, version],
  );
  return (
    <section class="card diff-card" aria-labelledby="version-title">
      <h2 id="version-title">Version {version}</h2>
      {shown.loading && !shown.data ? <Loading what={`version ${version}`} /> : null}
      <ProblemMessage problem={shown.error} />
      {shown.data ? (
        <>
          <p class="muted">{shown.data.status}, made <Time at={shown.data.created_at} /> by <Author id={shown.data.author} />{shown.data.comment ? <>: <q>{shown.data.comment}</q></> : null}</p>
          <ScrollingText class="diff-text" landmark label={`Rule file of version ${version}`}>{shown.data.yaml}</ScrollingText>
        </>
      ) : null}
    </section>
  );
}
