import { api, ok } from '../../api/client';
import { Loading, ProblemMessage, ScrollingText } from '../../components/ui';
import { useResource } from '../../hooks';
import { useSession } from '../../session';
import type { Version } from './types';

const shown = (value: unknown) => (value === undefined ? 'none' : JSON.stringify(value));

const lineClass = (line: string) =>
  line.startsWith('+++') || line.startsWith('---') ? 'diff-file' : line.startsWith('+') ? 'diff-add' : line.startsWith('-') ? 'diff-del' : line.startsWith('@@') ? 'diff-hunk' : undefined;

/** A version by number, or the live version or the draft. */
export type VersionRef = number | 'published' | 'draft';

/** What publishing the draft would change. */
export function DraftDiff({ eventType, draft }: { eventType: string; draft: Version }) {
  return <VersionDiff eventType={eventType} from="published" to="draft" title="Changes against live" stamp={draft.yaml_sha256} />;
}

/**
 * What changed from one version to another: the rules added, removed and changed, the thresholds,
 * and the diff of the YAML texts (edits keep untouched lines as written, so it shows the edited lines).
 */
export function VersionDiff({ eventType, from, to, title, stamp }: { eventType: string; from: VersionRef; to: VersionRef; title: string; stamp?: string }) {
  const { account } = useSession();
  const diff = useResource(
    () => ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}/diff', { params: { path: { account: account!, event_type: eventType }, query: { from, to } } })),
    [account, eventType, from, to, stamp],
  );
  const d = diff.data;
  const rules = d?.rules;
  const nothing = d && !d.thresholds && rules!.added.length + rules!.removed.length + rules!.changed.length === 0 && !rules!.reordered;
  return (
    <section class="card diff-card" aria-labelledby="diff-title">
      <h2 id="diff-title">{title}</h2>
      {diff.loading && !d ? <Loading what="the changes" /> : null}
      <ProblemMessage problem={diff.error} />
      {d ? (
        <>
          <p class="muted">Version {d.from.version} ({d.from.status}) to version {d.to.version} ({d.to.status}).</p>
          {nothing ? <p>No change to the rules or thresholds{d.text ? ' (the text differs in layout or comments only)' : ''}.</p> : null}
          <ul class="changes">
            {d.thresholds ? <li>Thresholds: review {d.thresholds.from.review} → {d.thresholds.to.review}, decline {d.thresholds.from.decline} → {d.thresholds.to.decline}</li> : null}
            {rules!.added.map((r) => <li key={`+${r.id}`}>Added <code>{r.id}</code> ({r.name}), score {r.score}</li>)}
            {rules!.removed.map((r) => <li key={`-${r.id}`}>Removed <code>{r.id}</code> ({r.name})</li>)}
            {rules!.changed.map((r) => (
              <li key={`~${r.id}`}>Changed <code>{r.id}</code>: {r.changes.map((c) => `${c.property} ${shown(c.from)} → ${shown(c.to)}`).join('; ')}</li>
            ))}
            {rules!.reordered ? <li>Rules reordered</li> : null}
          </ul>
          {d.text ? (
            <ScrollingText class="diff-text" landmark label={`Diff of the YAML of ${eventType}, version ${d.from.version} to ${d.to.version}`}>
              {d.text.split('\n').filter((line) => !line.startsWith('====')).map((line, i) => <span key={i} class={lineClass(line)}>{line}{'\n'}</span>)}
            </ScrollingText>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
