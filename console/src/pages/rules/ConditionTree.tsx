import { useId } from 'preact/hooks';
import { OPERATOR_LABELS, type Condition, type Operator, type RuleField } from './types';

/**
 * A custom rule's condition as the analyst builds it: a condition on one field, or a group of
 * conditions of which all (or any) must hold; either may be negated. The engine's `all` / `any` /
 * `not` (docs/rules.md "Conditions") are what it is sent as.
 */
export type ConditionNode =
  | { key: number; negated: boolean; kind: 'field'; field: string; operator: Operator; value: string }
  | { key: number; negated: boolean; kind: 'all' | 'any'; children: ConditionNode[] };

let nextKey = 1;
export const fieldNode = (field = 'email.domain'): ConditionNode => ({ key: nextKey++, negated: false, kind: 'field', field, operator: 'equals', value: '' });
export const groupNode = (kind: 'all' | 'any', children: ConditionNode[]): ConditionNode => ({ key: nextKey++, negated: false, kind, children });

/** Operators whose value is a list typed as "a, b, c". */
export const LISTS: Operator[] = ['in', 'not_in', 'ends_with', 'cidr'];

/** A typed value as the field's JSON type; text that is not one is sent as it is, for the API to name. */
function typed(text: string, field: RuleField): string | number | boolean {
  const trimmed = text.trim();
  if (field.value_type === 'number' && trimmed !== '' && Number.isFinite(Number(trimmed))) return Number(trimmed);
  if (field.value_type === 'boolean' && (trimmed === 'true' || trimmed === 'false')) return trimmed === 'true';
  return field.value_type === 'string' ? text : trimmed;
}

/** A yes/no value is chosen from a select: true unless "false" was picked. */
const isYesNo = (field: RuleField, operator: Operator) => operator === 'exists' || (field.value_type === 'boolean' && (operator === 'equals' || operator === 'not_equals'));

/** The operator shown: the one chosen if the field's type allows it, else the type's first. */
const operatorOf = (node: { operator: Operator }, field: RuleField) => (field.operators.includes(node.operator) ? node.operator : field.operators[0]!);

function leafCondition(field: RuleField, operator: Operator, value: string): Condition {
  if (isYesNo(field, operator)) return { field: field.path, [operator]: value !== 'false' } as Condition;
  if (LISTS.includes(operator)) {
    const items = value.split(',').map((v) => v.trim()).filter((v) => v !== '').map((v) => typed(v, field));
    const single = (operator === 'ends_with' || operator === 'cidr') && items.length === 1;
    return { field: field.path, [operator]: single ? items[0] : items } as Condition;
  }
  return { field: field.path, [operator]: typed(value, field) } as Condition;
}

/**
 * The condition the API takes, and where each node lands in it (`rule.when.any.1.not`), so the
 * API's messages are shown at the control they name. A group of one is sent as its condition.
 */
export function conditionOf(node: ConditionNode, fields: readonly RuleField[], path: string, paths: Map<number, string>): Condition {
  const inner = node.negated ? `${path}.not` : path;
  paths.set(node.key, inner);
  let condition: Condition;
  if (node.kind === 'field') {
    const field = fields.find((f) => f.path === node.field) ?? fields[0]!;
    condition = leafCondition(field, operatorOf(node, field), node.value);
  } else if (node.children.length === 1) {
    condition = conditionOf(node.children[0]!, fields, inner, paths);
  } else {
    condition = { [node.kind]: node.children.map((child, i) => conditionOf(child, fields, `${inner}.${node.kind}.${i}`, paths)) } as Condition;
  }
  return node.negated ? { not: condition } : condition;
}

/** Messages of the API at `path` exactly, or under it (`under`), joined. */
export type MessagesAt = (path: string, under?: boolean) => string | undefined;

interface NodeProps {
  node: ConditionNode;
  fields: readonly RuleField[];
  /** Where the node is: "Condition 2.1" */
  label: string;
  paths: ReadonlyMap<number, string>;
  messages: MessagesAt;
  onChange: (node: ConditionNode) => void;
  /** Absent for the top condition, which cannot be removed. */
  onRemove?: () => void;
}

/** One node of the condition: a field condition or a group, each in its own labelled fieldset. */
export function ConditionEditor(props: NodeProps) {
  return props.node.kind === 'field' ? <FieldCondition {...props} node={props.node} /> : <GroupCondition {...props} node={props.node} />;
}

function Negate({ node, label, onChange }: Pick<NodeProps, 'node' | 'label' | 'onChange'>) {
  const id = useId();
  return (
    <div class="field negate">
      <label for={id}>
        <input id={id} type="checkbox" checked={node.negated} onChange={(e) => onChange({ ...node, negated: e.currentTarget.checked })} />
        {' '}Negate {label.toLowerCase()}
      </label>
      <small>Fires when it is false (still not when unknown).</small>
    </div>
  );
}

function NodeButtons({ node, label, onChange, onRemove }: Pick<NodeProps, 'node' | 'label' | 'onChange' | 'onRemove'>) {
  return (
    <div class="condition-actions">
      {node.kind === 'field' ? (
        <button type="button" onClick={() => onChange(groupNode('all', [node, fieldNode()]))}>Combine {label.toLowerCase()} with another</button>
      ) : null}
      {onRemove ? <button type="button" onClick={onRemove}>Remove {label.toLowerCase()}</button> : null}
    </div>
  );
}

function FieldCondition({ node, fields, label, paths, messages, onChange, onRemove }: NodeProps & { node: Extract<ConditionNode, { kind: 'field' }> }) {
  const ids = useId();
  const field = fields.find((f) => f.path === node.field) ?? fields[0]!;
  const op = operatorOf(node, field);
  const path = paths.get(node.key);
  const fieldError = path === undefined ? undefined : messages(`${path}.field`);
  const valueError = path === undefined ? undefined : [messages(path), messages(`${path}.${op}`, true)].filter(Boolean).join(' ') || undefined;
  const groups = [...new Set(fields.map((f) => f.path.split('.')[0]!))];
  return (
    <fieldset class="condition">
      <legend>{label}</legend>
      <div class="field">
        <label for={`${ids}-field`}>Field</label>
        <select id={`${ids}-field`} value={field.path} aria-invalid={fieldError ? true : undefined}
          aria-describedby={`${ids}-field-about${fieldError ? ` ${ids}-field-error` : ''}`}
          onChange={(e) => onChange({ ...node, field: e.currentTarget.value, value: '' })}>
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
        {fieldError ? <small id={`${ids}-field-error`} class="field-error">{fieldError}</small> : null}
      </div>
      <div class="field">
        <label for={`${ids}-operator`}>Operator</label>
        <select id={`${ids}-operator`} value={op} onChange={(e) => onChange({ ...node, operator: e.currentTarget.value as Operator })}>
          {field.operators.map((o) => <option key={o} value={o}>{OPERATOR_LABELS[o]}</option>)}
        </select>
      </div>
      {isYesNo(field, op) ? (
        <div class="field">
          <label for={`${ids}-value`}>Value</label>
          <select id={`${ids}-value`} value={node.value === 'false' ? 'false' : 'true'} onChange={(e) => onChange({ ...node, value: e.currentTarget.value })}
            aria-invalid={valueError ? true : undefined} aria-describedby={valueError ? `${ids}-value-error` : undefined}>
            <option value="true">{op === 'exists' ? 'yes (sent or found)' : 'true'}</option>
            <option value="false">{op === 'exists' ? 'no' : 'false'}</option>
          </select>
          {valueError ? <small id={`${ids}-value-error`} class="field-error">{valueError}</small> : null}
        </div>
      ) : (
        <div class="field">
          <label for={`${ids}-value`}>Value</label>
          <input id={`${ids}-value`} value={node.value} class={op === 'matches' ? 'mono' : undefined} onInput={(e) => onChange({ ...node, value: e.currentTarget.value })}
            aria-invalid={valueError ? true : undefined}
            aria-describedby={[`${ids}-value-hint`, valueError ? `${ids}-value-error` : ''].filter(Boolean).join(' ')} />
          <small id={`${ids}-value-hint`}>
            {LISTS.includes(op) ? 'Several values: separate them with commas.' : op === 'matches' ? 'RE2 syntax: no back-references or look-arounds; (?i) for case-insensitive.' : `A ${field.value_type}.`}
          </small>
          {valueError ? <small id={`${ids}-value-error`} class="field-error">{valueError}</small> : null}
        </div>
      )}
      <Negate node={node} label={label} onChange={onChange} />
      <NodeButtons node={node} label={label} onChange={onChange} onRemove={onRemove} />
    </fieldset>
  );
}

function GroupCondition({ node, fields, label, paths, messages, onChange, onRemove }: NodeProps & { node: Extract<ConditionNode, { kind: 'all' | 'any' }> }) {
  const ids = useId();
  const path = paths.get(node.key);
  const error = path === undefined ? undefined : messages(path);
  const replace = (i: number, child: ConditionNode) => onChange({ ...node, children: node.children.map((c, j) => (j === i ? child : c)) });
  const remove = (i: number) => {
    const children = node.children.filter((_, j) => j !== i);
    // A group left with one condition becomes that condition (negated if the group was).
    onChange(children.length === 1 ? { ...children[0]!, negated: children[0]!.negated !== node.negated } : { ...node, children });
  };
  return (
    <fieldset class="condition-group">
      <legend>{label}</legend>
      <div class="field">
        <label for={`${ids}-kind`}>Fires when</label>
        <select id={`${ids}-kind`} value={node.kind} onChange={(e) => onChange({ ...node, kind: e.currentTarget.value as 'all' | 'any' })}
          aria-invalid={error ? true : undefined} aria-describedby={error ? `${ids}-error` : undefined}>
          <option value="all">all of these hold</option>
          <option value="any">any of these holds</option>
        </select>
        {error ? <small id={`${ids}-error`} class="field-error">{error}</small> : null}
      </div>
      {node.children.map((child, i) => (
        <ConditionEditor key={child.key} node={child} fields={fields} label={label === 'Condition' ? `Condition ${i + 1}` : `${label}.${i + 1}`} paths={paths} messages={messages}
          onChange={(c) => replace(i, c)} onRemove={() => remove(i)} />
      ))}
      <div class="condition-actions">
        <button type="button" onClick={() => onChange({ ...node, children: [...node.children, fieldNode()] })}>Add a condition to {label.toLowerCase()}</button>
        <button type="button" onClick={() => onChange({ ...node, children: [...node.children, groupNode(node.kind === 'all' ? 'any' : 'all', [fieldNode(), fieldNode()])] })}>
          Add a group to {label.toLowerCase()}
        </button>
      </div>
      <Negate node={node} label={label} onChange={onChange} />
      {onRemove ? <div class="condition-actions"><button type="button" onClick={onRemove}>Remove {label.toLowerCase()}</button></div> : null}
    </fieldset>
  );
}
