import { api, ok, type ApiProblem } from '../../api/client';
import { ProblemMessage } from '../../components/ui';
import { useAction } from '../../hooks';
import { parameterProblem, sameRow, savedRow, writtenId, type Parameter, type RowValues } from './draft-edits';
import { unplaced } from './problems';
import { conditionText, MODES, modeLabel, type EffectiveRule, type HitWindow, type LibraryRule, type Mode, type Version, type WrittenRule } from './types';

export function Thresholds({ thresholds }: { thresholds: Version['thresholds'] }) {
  if (!thresholds) return <p class="muted">Thresholds: none in effect (the text does not validate).</p>;
  const { review, decline } = thresholds;
  return (
    <p class="thresholds">
      A total score {review > 0 ? <>below <strong>{review}</strong> is approved; </> : null}
      {decline > review ? <>from <strong>{review}</strong> to <strong>{decline - 1}</strong> it goes to review; </> : null}
      <strong>{decline}</strong> or more is declined.
    </p>
  );
}

const ruleKind = (rule: EffectiveRule) => (rule.kind === 'library' ? 'built-in' : 'custom');

/** A custom rule's condition, as text (its values are user input). */
function When({ rule }: { rule: EffectiveRule }) {
  return rule.when ? <small class="block when">when <code>{conditionText(rule.when)}</code></small> : null;
}

const percent = (share: number | null) => (share === null ? '–' : `${(share * 100).toLocaleString('en', { maximumFractionDigits: 1 })} %`);

/** One rule's counts in one window: fired, and unknown when it was. */
function Hits({ window, id }: { window: HitWindow; id: string }) {
  const rule = window.rules.find((r) => r.rule_id === id);
  if (!rule) return <span class="muted">–</span>;
  return (
    <>
      fired {rule.fired.toLocaleString('en')} <span class="muted">({percent(rule.fired_share)})</span>
      {rule.unknown > 0 ? <small class="block">unknown {rule.unknown.toLocaleString('en')} <span class="muted">({percent(rule.unknown_share)})</span></small> : null}
    </>
  );
}

/** A version's rules as they take effect, read-only; the live version's with their hit rates. */
export function RulesTable({ rules, caption, hits }: { rules: EffectiveRule[]; caption: string; hits?: HitWindow[] }) {
  if (rules.length === 0) return <p class="muted">No rules: every event scores 0 and is approved.</p>;
  const [day, week] = hits ?? [];
  return (
    <>
      {day && week ? (
        <p class="muted hit-summary">
          Hit rates: out of {day.evaluations.toLocaleString('en')} evaluations logged in the last 24 hours and {week.evaluations.toLocaleString('en')} in the last 7 days,
          how many each rule fired on (live or dry run) and could not decide (an input unknown).
        </p>
      ) : null}
      <table class="rules">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Rule</th><th scope="col" class="num">Score</th><th scope="col">Mode</th>
            {day && week ? <><th scope="col">Last 24 hours</th><th scope="col">Last 7 days</th></> : null}
          </tr>
        </thead>
        <tbody>
          {rules.map((rule) => (
            <tr key={rule.id} class={rule.mode === 'off' ? 'rule-off' : undefined}>
              <td>{rule.name}<small class="block"><code>{rule.id}</code> <span class="muted">{ruleKind(rule)}</span></small><When rule={rule} /></td>
              <td class="num">{rule.score}</td>
              <td class="nowrap">{modeLabel(rule.mode)}</td>
              {day && week ? <><td class="nowrap hits"><Hits window={day} id={rule.id} /></td><td class="nowrap hits"><Hits window={week} id={rule.id} /></td></> : null}
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/**
 * The draft's rules with a score, a mode and a remove button each (admins), and a library rule's
 * parameters within their documented bounds. The controls show the unsaved edits (`edits`) over the
 * saved text, each changed row marked; the draft's one Save sends them (RuleSet.tsx). A problem the
 * API named at `rules.<id>.<field>` shows next to that control while it holds the value sent.
 */
export function DraftRulesTable({ account, eventType, draft, library, edits, sent, problem, onEdit, onChanged }: {
  account: string;
  eventType: string;
  draft: Version;
  library: LibraryRule[] | undefined;
  edits: Record<string, RowValues>;
  sent: Record<string, RowValues>;
  problem: ApiProblem | undefined;
  onEdit: (id: string, values: RowValues | null) => void;
  onChanged: () => void;
}) {
  if (draft.rules.length === 0) return <p class="muted">No rules yet: add one from the library or write a custom rule.</p>;
  const written = draft.rule_set?.rules ?? [];
  return (
    <table class="rules">
      <caption class="visually-hidden">Rules of the draft of {eventType}</caption>
      <thead><tr><th scope="col">Rule</th><th scope="col">Score</th><th scope="col">Mode</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>
        {draft.rules.map((rule) => {
          const writtenRule = written.find((w) => writtenId(w) === rule.id);
          const parameters = parametersOf(library, rule);
          return (
            <DraftRuleRow key={`${draft.yaml_sha256}/${rule.id}`} account={account} eventType={eventType} rule={rule} written={writtenRule} parameters={parameters}
              saved={savedRow(rule, writtenRule, parameters)} edited={edits[rule.id]} sent={sent[rule.id]} problem={problem}
              onEdit={(values) => onEdit(rule.id, values)} onChanged={onChanged} />
          );
        })}
      </tbody>
    </table>
  );
}

/** A library rule's parameters (none for a custom rule, or while the library loads). */
export const parametersOf = (library: LibraryRule[] | undefined, rule: EffectiveRule): Parameter[] =>
  (rule.kind === 'library' ? library?.find((l) => l.id === rule.id)?.parameters : undefined) ?? [];

function DraftRuleRow({ account, eventType, rule, written, parameters, saved, edited, sent, problem, onEdit, onChanged }: {
  account: string;
  eventType: string;
  rule: EffectiveRule;
  written: WrittenRule | undefined;
  parameters: Parameter[];
  saved: RowValues;
  edited: RowValues | undefined;
  sent: RowValues | undefined;
  problem: ApiProblem | undefined;
  onEdit: (values: RowValues | null) => void;
  onChanged: () => void;
}) {
  const values = edited ?? saved;
  const set = (change: Partial<RowValues>) => {
    const next = { ...values, ...change };
    onEdit(sameRow(next, saved) ? null : next);
  };
  const path = { account, event_type: eventType, rule_id: rule.id };
  const remove = useAction(async () => {
    await ok(api.DELETE('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft/rules/{rule_id}', { params: { path } }));
    onChanged();
  });
  const changed = edited !== undefined;
  // The API's message about a control, while it still holds the value that was sent.
  const apiError = (field: string, current: string, wasSent: string | undefined) => (current === wasSent ? problem?.field(`rules.${rule.id}.${field}`) : undefined);
  const scoreError = apiError('score', values.score, sent?.score);
  const modeError = apiError('mode', values.mode, sent?.mode);
  const placed = (p: string) => p === `rules.${rule.id}.score` || p === `rules.${rule.id}.mode` || parameters.some((q) => p === `rules.${rule.id}.params.${q.name}`);
  // Problems about this rule that no control shows (a 404 when it was removed meanwhile): in the row.
  const own = problem?.errors.some((e) => e.path.startsWith(`rules.${rule.id}.`) && !placed(e.path)) ? unplaced(problem, placed) : undefined;
  return (
    <tr class={[rule.mode === 'off' ? 'rule-off' : '', changed ? 'row-unsaved' : ''].join(' ').trim() || undefined}>
      <td>
        {rule.name}
        {changed ? <span class="unsaved-mark"> unsaved</span> : null}
        <small class="block">
          <code>{rule.id}</code> <span class="muted">{ruleKind(rule)}{rule.default_score !== null && rule.default_score !== rule.score ? `, ${rule.default_score} by default` : ''}</span>
        </small>
        <When rule={rule} />
        {parameters.length > 0 ? (
          <div class="rule-params">
            {parameters.map((p) => {
              const id = `param-${rule.id}-${p.name}`;
              const text = values.params[p.name]!;
              const error = parameterProblem(p, text) ?? apiError(`params.${p.name}`, text, sent?.params[p.name]);
              return (
                <div key={p.name} class="field">
                  <label for={id}>{p.name} <span class="visually-hidden">of {rule.id}</span></label>
                  <input id={id} name={`rules.${rule.id}.params.${p.name}`} class="score-input" type="number" min={p.min} max={p.max} step={1} value={text} disabled={!written}
                    aria-invalid={error ? true : undefined} aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}
                    onInput={(e) => set({ params: { ...values.params, [p.name]: e.currentTarget.value } })} />
                  <small id={`${id}-hint`}>{p.description} {p.min} to {p.max.toLocaleString('en')}; default {p.default}.</small>
                  {error ? <small id={`${id}-error`} class="field-error">{error}</small> : null}
                </div>
              );
            })}
          </div>
        ) : null}
        <ProblemMessage problem={own ?? remove.error} />
      </td>
      <td>
        <label class="visually-hidden" for={`score-${rule.id}`}>Score of {rule.id}</label>
        <input id={`score-${rule.id}`} name={`rules.${rule.id}.score`} class="score-input" type="number" min={-100} max={100} step={1} value={values.score} disabled={!written}
          aria-invalid={scoreError ? true : undefined} aria-describedby={scoreError ? `score-${rule.id}-error` : undefined}
          onInput={(e) => set({ score: e.currentTarget.value })} />
        {scoreError ? <small id={`score-${rule.id}-error`} class="field-error block">{scoreError}</small> : null}
      </td>
      <td>
        <label class="visually-hidden" for={`mode-${rule.id}`}>Mode of {rule.id}</label>
        <select id={`mode-${rule.id}`} name={`rules.${rule.id}.mode`} value={values.mode} disabled={!written} onChange={(e) => set({ mode: e.currentTarget.value as Mode })}
          aria-invalid={modeError ? true : undefined} aria-describedby={modeError ? `mode-${rule.id}-error` : undefined}>
          {MODES.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
        </select>
        {modeError ? <small id={`mode-${rule.id}-error`} class="field-error block">{modeError}</small> : null}
      </td>
      <td class="row-actions">
        <button type="button" class="danger" onClick={() => void remove.run()} disabled={remove.busy} aria-label={`Remove ${rule.id}`}>Remove</button>
      </td>
    </tr>
  );
}
