import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { ProblemMessage } from '../../components/ui';
import { useUnsavedEdits } from '../../router';
import { useAction, useResource } from '../../hooks';
import { unplaced } from './problems';
import { conditionText, MODES, modeLabel, typedNumber, type EffectiveRule, type HitWindow, type LibraryRule, type Mode, type Version, type WrittenRule } from './types';

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

const writtenId = (rule: WrittenRule) => rule.library ?? rule.id;

type Parameter = LibraryRule['parameters'][number];

/**
 * The draft's rules with a score, a mode and a remove button each (admins), and a library rule's
 * parameters within their documented bounds. A change is sent as the rule as written with the new
 * values, so what it does not change stays as written.
 */
export function DraftRulesTable({ account, eventType, draft, onChanged }: { account: string; eventType: string; draft: Version; onChanged: () => void }) {
  const library = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rules/library', { params: { path: { account } } })), [account]);
  if (draft.rules.length === 0) return <p class="muted">No rules yet: add one from the library or write a custom rule.</p>;
  const written = draft.rule_set?.rules ?? [];
  return (
    <table class="rules">
      <caption class="visually-hidden">Rules of the draft of {eventType}</caption>
      <thead><tr><th scope="col">Rule</th><th scope="col">Score</th><th scope="col">Mode</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>
        {draft.rules.map((rule) => (
          <DraftRuleRow key={`${draft.yaml_sha256}/${rule.id}`} account={account} eventType={eventType} rule={rule}
            written={written.find((w) => writtenId(w) === rule.id)} onChanged={onChanged}
            parameters={library.data?.rules.find((l) => rule.kind === 'library' && l.id === rule.id)?.parameters ?? []} />
        ))}
      </tbody>
    </table>
  );
}

/** The parameters as typed: the file's value, else the default. */
const paramTexts = (parameters: Parameter[], written: WrittenRule | undefined) =>
  Object.fromEntries(parameters.map((p) => [p.name, String(written?.params?.[p.name] ?? p.default)]));

function DraftRuleRow({ account, eventType, rule, written, parameters, onChanged }: {
  account: string;
  eventType: string;
  rule: EffectiveRule;
  written: WrittenRule | undefined;
  parameters: Parameter[];
  onChanged: () => void;
}) {
  const [score, setScore] = useState(String(rule.score));
  const [mode, setMode] = useState<Mode>(rule.mode);
  const [edited, setParams] = useState<Record<string, string> | null>(null);
  const params = edited ?? paramTexts(parameters, written);
  // The parameters last sent: the API's message about one holds until it is edited.
  const [sent, setSent] = useState<Record<string, string>>({});
  const path = { account, event_type: eventType, rule_id: rule.id };
  const save = useAction(async () => {
    // What the file does not say stays unsaid while it is the default: the diff shows only what was edited.
    const next: WrittenRule = { ...written! };
    if (written?.score !== undefined || score !== String(rule.default_score ?? '')) next.score = typedNumber(score);
    if (written?.mode !== undefined || mode !== 'live') next.mode = mode;
    setSent(params);
    if (edited !== null) {
      // Only what differs from the default is written: a default stays a default if the library's changes.
      const set = parameters.filter((p) => params[p.name] !== String(p.default)).map((p) => [p.name, typedNumber(params[p.name]!)] as const);
      if (set.length > 0) next.params = Object.fromEntries(set);
      else delete next.params;
    }
    await ok(api.PUT('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft/rules/{rule_id}', { params: { path }, body: { rule: next } }));
    onChanged();
  });
  const remove = useAction(async () => {
    await ok(api.DELETE('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft/rules/{rule_id}', { params: { path } }));
    onChanged();
  });
  const initial = paramTexts(parameters, written);
  const changed = score !== String(rule.score) || mode !== rule.mode || parameters.some((p) => params[p.name] !== initial[p.name]);
  useUnsavedEdits(changed);
  const scoreError = save.error?.field('rule.score');
  const modeError = save.error?.field('rule.mode');
  const placed = (p: string) => p === 'rule.score' || p === 'rule.mode' || parameters.some((q) => p === `rule.params.${q.name}`);
  const problem = unplaced(save.error, placed) ?? remove.error;
  return (
    <tr class={rule.mode === 'off' ? 'rule-off' : undefined}>
      <td>
        {rule.name}
        <small class="block">
          <code>{rule.id}</code> <span class="muted">{ruleKind(rule)}{rule.default_score !== null && rule.default_score !== rule.score ? `, ${rule.default_score} by default` : ''}</span>
        </small>
        <When rule={rule} />
        {parameters.length > 0 ? (
          <div class="rule-params">
            {parameters.map((p) => {
              const id = `param-${rule.id}-${p.name}`;
              // Out of bounds is said at once, in the API's words; the API refuses it too.
              const value = Number(params[p.name]);
              const outOfBounds = params[p.name]!.trim() === '' || !Number.isInteger(value) || value < p.min || value > p.max;
              const error = (outOfBounds ? `${p.name} must be a whole number from ${p.min} to ${p.max}` : undefined) ?? (params[p.name] === sent[p.name] ? save.error?.field(`rule.params.${p.name}`) : undefined);
              return (
                <div key={p.name} class="field">
                  <label for={id}>{p.name} <span class="visually-hidden">of {rule.id}</span></label>
                  <input id={id} class="score-input" type="number" min={p.min} max={p.max} step={1} value={params[p.name]} disabled={!written}
                    aria-invalid={error ? true : undefined} aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}
                    onInput={(e) => setParams({ ...params, [p.name]: e.currentTarget.value })} />
                  <small id={`${id}-hint`}>{p.description} {p.min} to {p.max.toLocaleString('en')}; default {p.default}.</small>
                  {error ? <small id={`${id}-error`} class="field-error">{error}</small> : null}
                </div>
              );
            })}
          </div>
        ) : null}
        <ProblemMessage problem={problem} />
      </td>
      <td>
        <label class="visually-hidden" for={`score-${rule.id}`}>Score of {rule.id}</label>
        <input id={`score-${rule.id}`} class="score-input" type="number" min={-100} max={100} step={1} value={score} disabled={!written}
          aria-invalid={scoreError ? true : undefined} aria-describedby={scoreError ? `score-${rule.id}-error` : undefined}
          onInput={(e) => setScore(e.currentTarget.value)} />
        {scoreError ? <small id={`score-${rule.id}-error`} class="field-error block">{scoreError}</small> : null}
      </td>
      <td>
        <label class="visually-hidden" for={`mode-${rule.id}`}>Mode of {rule.id}</label>
        <select id={`mode-${rule.id}`} value={mode} disabled={!written} onChange={(e) => setMode(e.currentTarget.value as Mode)}
          aria-invalid={modeError ? true : undefined} aria-describedby={modeError ? `mode-${rule.id}-error` : undefined}>
          {MODES.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
        </select>
        {modeError ? <small id={`mode-${rule.id}-error`} class="field-error block">{modeError}</small> : null}
      </td>
      <td class="row-actions">
        <button type="button" onClick={() => void save.run()} disabled={!changed || save.busy} aria-label={`Save ${rule.id}`}>Save</button>
        <button type="button" class="danger" onClick={() => void remove.run()} disabled={remove.busy} aria-label={`Remove ${rule.id}`}>Remove</button>
      </td>
    </tr>
  );
}
