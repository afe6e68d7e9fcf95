import { useId, useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { Field, Loading, ProblemMessage } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import { useSession } from '../../session';
import { unplaced } from './problems';
import { MODES, OPERATOR_LABELS, typedNumber, type Condition, type Mode, type Operator, type RuleField } from './types';

/** Operators whose value is a list typed as "a, b, c". */
const LISTS: Operator[] = ['in', 'not_in', 'ends_with', 'cidr'];

/** A typed value as the field's JSON type; text that is not one is sent as it is, for the API to name. */
function typed(text: string, field: RuleField): string | number | boolean {
  const trimmed = text.trim();
  if (field.value_type === 'number' && trimmed !== '' && Number.isFinite(Number(trimmed))) return Number(trimmed);
  if (field.value_type === 'boolean' && (trimmed === 'true' || trimmed === 'false')) return trimmed === 'true';
  return field.value_type === 'string' ? text : trimmed;
}

/** A yes/no value is chosen from a select: true unless "false" was picked. */
const isYesNo = (field: RuleField, operator: Operator) => operator === 'exists' || (field.value_type === 'boolean' && (operator === 'equals' || operator === 'not_equals'));

function conditionOf(field: RuleField, operator: Operator, value: string): Condition {
  if (isYesNo(field, operator)) return { field: field.path, [operator]: value !== 'false' } as Condition;
  if (LISTS.includes(operator)) {
    const items = value.split(',').map((v) => v.trim()).filter((v) => v !== '').map((v) => typed(v, field));
    const single = (operator === 'ends_with' || operator === 'cidr') && items.length === 1;
    return { field: field.path, [operator]: single ? items[0] : items } as Condition;
  }
  return { field: field.path, [operator]: typed(value, field) } as Condition;
}

/**
 * A custom rule: a field from the catalogue, an operator its type accepts, a value. The API
 * validates it (a bad regular expression included) and its message is shown next to the control
 * it names.
 */
export function CustomRuleEditor({ eventType, onAdded, onClose }: { eventType: string; onAdded: () => void; onClose: () => void }) {
  const { account } = useSession();
  const catalogue = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rules/fields', { params: { path: { account: account! } } })), [account]);
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [score, setScore] = useState('10');
  const [mode, setMode] = useState<Mode>('live');
  const [fieldPath, setFieldPath] = useState('email.domain');
  const [operator, setOperator] = useState<Operator>('equals');
  const [value, setValue] = useState('');
  const ids = useId();

  const fields = catalogue.data?.fields ?? [];
  const field = fields.find((f) => f.path === fieldPath) ?? fields[0];
  const op = field && field.operators.includes(operator) ? operator : field?.operators[0] ?? 'equals';

  const add = useAction(async () => {
    const rule = { id, name, score: typedNumber(score), mode, when: conditionOf(field!, op, value) };
    await ok(api.POST('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft/rules', { params: { path: { account: account!, event_type: eventType } }, body: { rule } }));
    onAdded();
  });
  const error = add.error;
  const valueError = error?.errors.filter((e) => e.path.startsWith('rule.when.') && e.path !== 'rule.when.field').map((e) => e.message).join(' ') || undefined;
  const shown = (path: string) => ['rule.id', 'rule.name', 'rule.score', 'rule.when.field'].includes(path) || path.startsWith('rule.when.');
  const groups = [...new Set(fields.map((f) => f.path.split('.')[0]!))];

  return (
    <section class="card picker" aria-labelledby={`${ids}-title`}>
      <div class="picker-head">
        <h2 id={`${ids}-title`}>Write a custom rule</h2>
        <button type="button" onClick={onClose}>Close</button>
      </div>
      {catalogue.loading && !catalogue.data ? <Loading what="the fields" /> : null}
      <ProblemMessage problem={catalogue.error} />
      {field ? (
        <form noValidate onSubmit={(e) => { e.preventDefault(); void add.run(); }}>
          <div class="form-grid">
            <Field label="Rule id" value={id} onInput={(e) => setId(e.currentTarget.value)} hint="Lower-case letters, digits and _, e.g. sanctioned_country." error={error?.field('rule.id')} />
            <Field label="Name" value={name} onInput={(e) => setName(e.currentTarget.value)} hint="Shown in the evaluation's score details." error={error?.field('rule.name')} />
            <Field label="Score" type="number" min={-100} max={100} step={1} value={score} onInput={(e) => setScore(e.currentTarget.value)} hint="-100 to 100; negative lowers the risk." error={error?.field('rule.score')} />
            <div class="field">
              <label for={`${ids}-mode`}>Mode</label>
              <select id={`${ids}-mode`} value={mode} onChange={(e) => setMode(e.currentTarget.value as Mode)}>
                {MODES.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
              </select>
            </div>
          </div>
          <fieldset class="condition">
            <legend>Fires when</legend>
            <div class="field">
              <label for={`${ids}-field`}>Field</label>
              <select id={`${ids}-field`} value={field.path} aria-describedby={`${ids}-field-about`} onChange={(e) => { setFieldPath(e.currentTarget.value); setValue(''); }}>
                {groups.map((group) => (
                  <optgroup key={group} label={group}>
                    {fields.filter((f) => f.path.split('.')[0] === group).map((f) => <option key={f.path} value={f.path}>{f.path}</option>)}
                  </optgroup>
                ))}
              </select>
              <small id={`${ids}-field-about`}>
                <span class="badge-light">{field.type}</span> {field.description}
                {field.check ? ` Unknown when the ${field.check} check could not run: the rule then does not fire.` : ''}
              </small>
              {error?.field('rule.when.field') ? <small class="field-error">{error.field('rule.when.field')}</small> : null}
            </div>
            <div class="field">
              <label for={`${ids}-operator`}>Operator</label>
              <select id={`${ids}-operator`} value={op} onChange={(e) => setOperator(e.currentTarget.value as Operator)}>
                {field.operators.map((o) => <option key={o} value={o}>{OPERATOR_LABELS[o]}</option>)}
              </select>
            </div>
            {isYesNo(field, op) ? (
              <div class="field">
                <label for={`${ids}-value`}>Value</label>
                <select id={`${ids}-value`} value={value === 'false' ? 'false' : 'true'} onChange={(e) => setValue(e.currentTarget.value)}
                  aria-invalid={valueError ? true : undefined} aria-describedby={valueError ? `${ids}-value-error` : undefined}>
                  <option value="true">{op === 'exists' ? 'yes (sent or found)' : 'true'}</option>
                  <option value="false">{op === 'exists' ? 'no' : 'false'}</option>
                </select>
                {valueError ? <small id={`${ids}-value-error`} class="field-error">{valueError}</small> : null}
              </div>
            ) : (
              <Field label="Value" value={value} onInput={(e) => setValue(e.currentTarget.value)} class={op === 'matches' ? 'mono' : undefined}
                hint={LISTS.includes(op) ? 'Several values: separate them with commas.' : op === 'matches' ? 'RE2 syntax: no back-references or look-arounds; (?i) for case-insensitive.' : undefined}
                error={valueError} />
            )}
          </fieldset>
          <ProblemMessage problem={unplaced(error, shown)} />
          <div class="actions">
            <button type="submit" class="primary" disabled={add.busy}>Add to the draft</button>
          </div>
        </form>
      ) : null}
    </section>
  );
}
