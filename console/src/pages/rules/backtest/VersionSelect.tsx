import { useEffect, useId } from 'preact/hooks';
import { api, ok } from '../../../api/client';
import { ProblemMessage } from '../../../components/ui';
import { useResource } from '../../../hooks';

/**
 * A stored version of the event type's rule set, newest first; the draft is chosen by default
 * (else the live version), so that "test my change" is one click.
 */
export function VersionSelect({ account, eventType, label, value, onChange, error }: {
  account: string;
  eventType: string;
  label: string;
  value: number | undefined;
  onChange: (version: number) => void;
  error?: string | undefined;
}) {
  const id = useId();
  const versions = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}/versions', { params: { path: { account, event_type: eventType }, query: { limit: 100 } } })), [account, eventType]);
  const list = versions.data?.versions;
  useEffect(() => {
    if (value !== undefined || !list) return;
    const preferred = list.find((v) => v.status === 'draft') ?? list.find((v) => v.status === 'published') ?? list[0];
    if (preferred) onChange(preferred.version);
  }, [list, value]);

  if (versions.error) return <ProblemMessage problem={versions.error} />;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} disabled={!list} aria-invalid={error ? true : undefined} aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => onChange(Number(e.currentTarget.value))}>
        {(list ?? []).map((v) => (
          <option key={v.version} value={v.version}>
            {`Version ${v.version} (${v.status === 'published' ? 'live' : v.status})${v.comment ? `: ${v.comment}` : ''}`}
          </option>
        ))}
      </select>
      {list && !list.some((v) => v.status === 'draft') ? <small>No draft: make one on the rule set's page to test a change.</small> : null}
      {error ? <small id={`${id}-error`} class="field-error">{error}</small> : null}
    </div>
  );
}
