import { useId } from 'preact/hooks';
import type { ApiProblem } from '../../../api/client';
import { Field } from '../../../components/ui';
import { localToIso } from '../../../time';

/** A time range: the last day, week or month (the API's "time ago"), or from/to in local time. */
export interface Range {
  preset: '24h' | '7d' | '30d' | 'custom';
  /** `datetime-local` values, used with preset `custom`. */
  from: string;
  to: string;
}

const PRESETS: Array<[Range['preset'], string]> = [['24h', 'Last 24 hours'], ['7d', 'Last 7 days'], ['30d', 'Last 30 days'], ['custom', 'From … to …']];

/** The range as the API takes it (`since`, `until`); a local time becomes an ISO-8601 instant, an empty one is left for the API to name. */
export function rangeOf(range: Range): { since: string; until?: string } {
  if (range.preset !== 'custom') return { since: range.preset };
  return range.to === '' ? { since: localToIso(range.from) } : { since: localToIso(range.from), until: localToIso(range.to) };
}

export function RangeFields({ value, onChange, errors }: { value: Range; onChange: (range: Range) => void; errors: ApiProblem | undefined }) {
  const id = useId();
  return (
    <>
      <div class="field">
        <label for={id}>Time range</label>
        <select id={id} value={value.preset} onChange={(e) => onChange({ ...value, preset: e.currentTarget.value as Range['preset'] })}
          aria-invalid={value.preset !== 'custom' && errors?.field('since') ? true : undefined} aria-describedby={value.preset !== 'custom' && errors?.field('since') ? `${id}-error` : undefined}>
          {PRESETS.map(([preset, label]) => <option key={preset} value={preset}>{label}</option>)}
        </select>
        {value.preset !== 'custom' && errors?.field('since') ? <small id={`${id}-error`} class="field-error">{errors.field('since')}</small> : null}
      </div>
      {value.preset === 'custom' ? (
        <>
          <Field label="From" type="datetime-local" required value={value.from} onInput={(e) => onChange({ ...value, from: e.currentTarget.value })} error={errors?.field('since')} />
          <Field label="To" type="datetime-local" value={value.to} hint="Empty: now" onInput={(e) => onChange({ ...value, to: e.currentTarget.value })} error={errors?.field('until')} />
        </>
      ) : null}
    </>
  );
}
