import { useId, useState } from 'preact/hooks';
import { api, ApiProblem, ok, type Answered } from '../../api/client';
import type { operations } from '../../api/schema';
import { ProblemMessage, StateBadge } from '../../components/ui';
import { useAction } from '../../hooks';
import { useSession } from '../../session';
import { unplaced } from './problems';
import { modeLabel } from './types';

type DryRunAnswer = Answered<'dryRunRuleSet'>;
type SampleRequest = operations['dryRunRuleSet']['requestBody']['content']['application/json']['request'];

const SAMPLE = JSON.stringify({ ip: '81.2.69.160', email: 'jane.doe@example.com', user: { user_id: 'user-1' } }, null, 2);

/** Scores a request the user writes with the draft or the live version, with the real enrichment, recording nothing. */
export function DryRun({ eventType, hasDraft }: { eventType: string; hasDraft: boolean }) {
  const { account } = useSession();
  const ids = useId();
  const [text, setText] = useState(SAMPLE);
  const [version, setVersion] = useState<'draft' | 'published'>(hasDraft ? 'draft' : 'published');
  const [answer, setAnswer] = useState<DryRunAnswer | undefined>();
  const run = useAction(async () => {
    let request: SampleRequest;
    try {
      request = JSON.parse(text) as SampleRequest;
    } catch (error) {
      throw new ApiProblem(0, 'invalid_json', 'Not JSON', '', [{ path: 'request', message: `Not valid JSON: ${(error as Error).message}` }]);
    }
    setAnswer(await ok(api.POST('/admin/v1/accounts/{account}/rule-sets/{event_type}/dry-run', { params: { path: { account: account!, event_type: eventType } }, body: { request, version } })));
  });
  const requestError = run.error?.errors.filter((e) => e.path === 'request' || e.path.startsWith('request.')).map((e) => (e.path === 'request' ? e.message : `${e.path.slice(8)}: ${e.message}`)).join(' ') || undefined;
  return (
    <section aria-label="Dry run">
      <p class="intro">Score one request as the evaluate endpoint would enrich it (DNS, IP data, lists), without recording it. Behaviour history is not read, so behaviour rules are unknown.</p>
      <form noValidate onSubmit={(e) => { e.preventDefault(); void run.run(); }}>
        <div class="field">
          <label for={`${ids}-request`}>Sample request (JSON)</label>
          <textarea id={`${ids}-request`} class="mono" rows={8} value={text} onInput={(e) => setText(e.currentTarget.value)} spellcheck={false}
            aria-invalid={requestError ? true : undefined} aria-describedby={requestError ? `${ids}-request-error` : undefined} />
          {requestError ? <small id={`${ids}-request-error`} class="field-error">{requestError}</small> : null}
        </div>
        <div class="actions">
          <label for={`${ids}-version`}>Score with</label>
          <select id={`${ids}-version`} value={version} onChange={(e) => setVersion(e.currentTarget.value as typeof version)}>
            {hasDraft ? <option value="draft">the draft</option> : null}
            <option value="published">the live version</option>
          </select>
          <button type="submit" class="primary" disabled={run.busy}>Run</button>
        </div>
      </form>
      <ProblemMessage problem={unplaced(run.error, (p) => p === 'request' || p.startsWith('request.'))} />
      {answer ? <DryRunResult answer={answer} /> : null}
    </section>
  );
}

function DryRunResult({ answer }: { answer: DryRunAnswer }) {
  const fired = answer.rules.filter((r) => r.outcome === 'fired');
  return (
    <section class="card dry-run-result" aria-label="Dry run result">
      <p class="score-line">
        Score <strong>{answer.score.fraud_score}</strong>: <StateBadge state={answer.score.state} />
        {answer.version ? <span class="muted"> with version {answer.version.version} ({answer.version.status})</span> : null}
        {answer.live ? <span class="muted">; the live version {answer.live.version} gives {answer.live.fraud_score} ({answer.live.state})</span> : null}
      </p>
      <p>Rules fired: {fired.length === 0 ? <span class="muted">none</span> : fired.map((r) => r.id).join(', ')}</p>
      {answer.unavailable.length > 0 ? <p class="muted">Could not run: {answer.unavailable.join(', ')}</p> : null}
      <table>
        <caption class="visually-hidden">Each rule's outcome</caption>
        <thead><tr><th scope="col">Rule</th><th scope="col">Outcome</th><th scope="col" class="num">Score</th><th scope="col">Mode</th><th scope="col">Facts read</th></tr></thead>
        <tbody>
          {answer.rules.map((r) => (
            <tr key={r.id} class={r.outcome === 'fired' ? 'fired' : undefined}>
              <td><code>{r.id}</code> <span class="muted">{r.name}</span></td>
              <td>{r.outcome.replace('_', ' ')}</td>
              <td class="num">{r.score}</td>
              <td>{modeLabel(r.mode)}</td>
              <td class="wrap">{r.evidence.map((e) => `${e.field} = ${e.reading === 'value' ? JSON.stringify(e.value) : e.reading}${e.unavailable ? ` (${e.unavailable})` : ''}`).join('; ')}</td>
            </tr>
          ))}
          {answer.rules.length === 0 ? <tr><td colSpan={5} class="muted">No rule in this version.</td></tr> : null}
        </tbody>
      </table>
    </section>
  );
}
