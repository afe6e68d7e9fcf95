import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { Confirm, Loading, ProblemMessage, Time } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import { useSession } from '../../session';
import { Author } from './authors';
import type { VersionInfo } from './types';

/** Every version, newest first, with who made it, when and why; admins roll back to an earlier one. */
export function History({ eventType, admin, live, onRolledBack }: { eventType: string; admin: boolean; live: number | undefined; onRolledBack: () => void }) {
  const { account } = useSession();
  const path = { account: account!, event_type: eventType };
  const [before, setBefore] = useState<number | undefined>();
  const page = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}/versions', { params: { path, query: { before, limit: 50 } } })), [account, eventType, before]);
  const [target, setTarget] = useState<VersionInfo | undefined>();
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
      {page.data ? (
        <table>
          <caption class="visually-hidden">Versions of {eventType}, newest first</caption>
          <thead><tr><th scope="col" class="num">Version</th><th scope="col">Status</th><th scope="col">By</th><th scope="col">Made</th><th scope="col">Published</th><th scope="col">Comment</th>{admin ? <th scope="col"><span class="visually-hidden">Actions</span></th> : null}</tr></thead>
          <tbody>
            {page.data.versions.map((v) => (
              <tr key={v.version}>
                <td class="num">{v.version}</td>
                <td>{v.version === live ? <strong>live</strong> : v.status}</td>
                <td class="wrap"><Author id={v.author} /></td>
                <td><Time at={v.created_at} /></td>
                <td><Time at={v.published_at} empty="–" /></td>
                <td class="wrap">{v.comment ?? <span class="muted">none</span>}</td>
                {admin ? (
                  <td class="row-actions">
                    {v.status === 'archived' ? <button type="button" onClick={() => setTarget(v)} aria-label={`Roll back to version ${v.version}`}>Roll back</button> : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <div class="actions">
        {before !== undefined ? <button type="button" onClick={() => setBefore(undefined)}>Newest versions</button> : null}
        {page.data?.next_before ? <button type="button" onClick={() => setBefore(page.data!.next_before!)}>Older versions</button> : null}
      </div>
      {target ? (
        <Confirm title={`Roll ${eventType} back to version ${target.version}?`} action={`Roll back to version ${target.version}`} busy={rollback.busy} problem={rollback.error}
          onCancel={() => { setTarget(undefined); rollback.clear(); }} onConfirm={() => void rollback.run(target)}>
          <p>Version {target.version}'s rules are published again as a new version and score the next evaluation of {eventType} (every replica within a few seconds). The live version {live} stays in the history. A draft, if there is one, is kept.</p>
        </Confirm>
      ) : null}
    </section>
  );
}
