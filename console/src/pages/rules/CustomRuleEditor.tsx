import { useId, useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { Field, Loading, ProblemMessage } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import { useSession } from '../../session';
import { unplaced } from './problems';
import { ConditionEditor, conditionOf, fieldNode, type ConditionNode } from './ConditionTree';
import { MODES, OPERATOR_LABELS, typedNumber, type Mode, type Operator } from './types';

/** The operator names: the first segment of an error path under a field condition. */
const OPERATORS = new Set(Object.keys(OPERATOR_LABELS) as Operator[]);

/**
 * A custom rule: conditions on fields from the catalogue, each with an operator its type accepts
 * and a value, combined in groups of which all or any must hold, any of them negated. The API
 * validates it (a bad regular expression included) and its message is shown next to the control
 * it names.
 */
export function CustomRuleEditor({ eventType, onAdded, onClose }: { eventType: string; onAdded: () => void; onClose: () => void }) {
  const { account } = useSession();
  // With the event type: the draft's velocity counters are offered too (velocity.<name>).
  const catalogue = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rules/fields', { params: { path: { account: account! }, query: { event_type: eventType } } })), [account, eventType]);
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [score, setScore] = useState('10');
  const [mode, setMode] = useState<Mode>('live');
  const [condition, setCondition] = useState<ConditionNode>(() => fieldNode());
  const ids = useId();

  const fields = catalogue.data?.fields ?? [];
  // Where each node of the condition lands in the rule sent, for the API's messages.
  const paths = new Map<number, string>();
  const when = fields.length > 0 ? conditionOf(condition, fields, 'rule.when', paths) : null;

  const add = useAction(async () => {
    const rule = { id, name, score: typedNumber(score), mode, when: when! };
    await ok(api.POST('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft/rules', { params: { path: { account: account!, event_type: eventType } }, body: { rule } }));
    onAdded();
  });
  const error = add.error;
  const messages = (path: string, under = false) =>
    error?.errors.filter((e) => e.path === path || (under && e.path.startsWith(`${path}.`))).map((e) => e.message).join(' ') || undefined;
  const nodePaths = [...paths.values()];
  const shown = (path: string) => ['rule.id', 'rule.name', 'rule.score'].includes(path)
    || nodePaths.some((p) => path === p || path === `${p}.field` || (path.startsWith(`${p}.`) && OPERATORS.has(path.slice(p.length + 1).split('.')[0] as Operator)));

  return (
    <section class="card picker" aria-labelledby={`${ids}-title`}>
      <div class="picker-head">
        <h2 id={`${ids}-title`}>Write a custom rule</h2>
        <button type="button" onClick={onClose}>Close</button>
      </div>
      {catalogue.loading && !catalogue.data ? <Loading what="the fields" /> : null}
      <ProblemMessage problem={catalogue.error} />
      {when !== null ? (
        <form noValidate onSubmit={(e) => { e.preventDefault(); void add.run(); }}>
          <div class="form-grid">
            <Field label="Rule id" value={id} onInput={(e) => setId(e.currentTarget.value)} hint="Lower-case letters, digits and _, e.g. sanctioned_country. Your backend sees it as rule_id." error={error?.field('rule.id')} />
            <Field label="Name" value={name} onInput={(e) => setName(e.currentTarget.value)} hint="What analysts and your backend see when it fires." error={error?.field('rule.name')} />
            <Field label="Score" type="number" min={-100} max={100} step={1} value={score} onInput={(e) => setScore(e.currentTarget.value)} hint="-100 to 100; a negative score lowers the risk." error={error?.field('rule.score')} />
            <div class="field">
              <label for={`${ids}-mode`}>Mode</label>
              <select id={`${ids}-mode`} value={mode} onChange={(e) => setMode(e.currentTarget.value as Mode)}>
                {MODES.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
              </select>
            </div>
          </div>
          <ConditionEditor node={condition} fields={fields} label="Condition" paths={paths} messages={messages} onChange={setCondition} />
          <ProblemMessage problem={unplaced(error, shown)} />
          <div class="actions">
            <button type="submit" class="primary" disabled={add.busy}>Add to the draft</button>
          </div>
        </form>
      ) : null}
    </section>
  );
}
