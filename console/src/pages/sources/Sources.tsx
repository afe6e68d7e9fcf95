import { Fragment } from 'preact';
import { api, ok, type Answered } from '../../api/client';
import { Loading, Page, ProblemMessage } from '../../components/ui';
import { useResource } from '../../hooks';
import { useSession } from '../../session';
import { AdviceText, SOURCE_ADVICE } from './advice';

type Source = Answered<'listSources'>['sources'][number];

const DAY_MS = 86_400_000;
const ageOf = (date: string | null) => (date === null ? null : Math.floor((Date.now() - Date.parse(date)) / DAY_MS));
const count = (n: number | null) => (n === null ? '–' : n.toLocaleString());
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/** The data every evaluation reads (the same for every account), and for owners the instance's health. */
export function Sources() {
  const { owner } = useSession();
  const sources = useResource(() => ok(api.GET('/admin/v1/sources')), []);
  return (
    <Page title="Data sources" intro="What every evaluation reads: loaded or not, the file's build date and age, entries, and the last file refused (the last good copy stays in use).">
      <ProblemMessage problem={sources.error} />
      {sources.data ? <SourceTable sources={sources.data.sources.filter((s) => !isFetched(s))} /> : sources.loading ? <Loading what="data sources" /> : null}
      {sources.data ? <FetchedTable sources={sources.data.sources.filter(isFetched)} /> : null}
      {owner ? <Health /> : null}
    </Page>
  );
}

/** A row of the data job's record (src/data-update/status.ts), not a file the service loads. */
const isFetched = (s: Source) => /^(email|ip)\.fetched\./.test(s.name);

/**
 * What `npm run data:update` (or its first-start run) fetched, per source: where from, when it last
 * fetched a copy that passed validation, that copy's entries, and the last error (a failing source
 * keeps serving its last good copy).
 */
function FetchedTable({ sources }: { sources: Source[] }) {
  return (
    <section aria-labelledby="fetched">
      <h2 id="fetched">Fetched by the data job</h2>
      {sources.length === 0 ? (
        <p class="muted">The data job has not run with this DATA_DIR yet: <code>npm run data:update</code> fetches the Tor exit list, open proxy and VPN lists, cloud ranges and fresh throw-away domain lists (docs/data.md).</p>
      ) : (
        <table>
          <thead><tr><th scope="col">Source</th><th scope="col">From</th><th scope="col">Last good fetch</th><th scope="col">Age</th><th scope="col" class="num">Entries</th><th scope="col">Last error</th></tr></thead>
          <tbody>
            {sources.map((s) => {
              const age = ageOf(s.build_date);
              return (
                <tr key={s.name}>
                  <th scope="row"><code>{s.name.replace(/^(email|ip)\.fetched\./, '')}</code> <span class="muted">{s.type}</span></th>
                  <td class="wrap">{s.source ?? <span class="muted">–</span>}</td>
                  <td class="nowrap">{s.build_date ? `${s.build_date.slice(0, 16).replace('T', ' ')} UTC` : <span class="state warn">never</span>}</td>
                  <td class="nowrap">{age === null ? <span class="muted">–</span> : <span class={age > 7 ? 'state warn' : undefined}>{age} {age === 1 ? 'day' : 'days'}</span>}</td>
                  <td class="num nowrap">{count(s.entries)}</td>
                  <td class="wrap">{s.error ? <span class="state bad">{s.error}</span> : <span class="muted">none</span>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function SourceTable({ sources }: { sources: Source[] }) {
  return (
    <table>
      <thead><tr><th scope="col">Source</th><th scope="col">Status</th><th scope="col">File</th><th scope="col">Built</th><th scope="col">Age</th><th scope="col" class="num">Entries</th><th scope="col">Last refusal</th></tr></thead>
      <tbody>
        {sources.map((s) => {
          const age = ageOf(s.build_date);
          return (
            <Fragment key={s.name}>
              <tr>
                <th scope="row"><code>{s.name}</code> <span class="muted">{s.type}</span></th>
                <td class="nowrap"><span class={s.loaded ? 'state ok' : 'state warn'}>{s.loaded ? 'loaded' : 'not loaded'}</span></td>
                <td class="wrap">{s.source ?? <span class="muted">–</span>}</td>
                <td class="nowrap">{s.build_date ? s.build_date.slice(0, 10) : <span class="muted">unknown</span>}</td>
                <td class="nowrap">{age === null ? <span class="muted">–</span> : <span class={age > 30 ? 'state warn' : undefined}>{age} {age === 1 ? 'day' : 'days'}</span>}</td>
                <td class="num nowrap">{count(s.entries)}</td>
                <td>{s.error ? <span class="state bad">{s.error}</span> : <span class="muted">none</span>}</td>
              </tr>
              {/* What loads a source that is not loaded, on a row of its own under it. */}
              {!s.loaded && SOURCE_ADVICE[s.name] ? (
                <tr class="advice"><td colSpan={7}><AdviceText advice={SOURCE_ADVICE[s.name]!} /></td></tr>
              ) : null}
            </Fragment>
          );
        })}
      </tbody>
    </table>
  );
}

function Health() {
  const health = useResource(() => ok(api.GET('/admin/v1/health')), []);
  const h = health.data;
  return (
    <section class="card" aria-labelledby="health">
      <h2 id="health">Instance health</h2>
      <ProblemMessage problem={health.error} />
      {h ? (
        <dl class="facts">
          <dt>Version</dt><dd>{h.version} on Node.js {h.node}, up {Math.round(h.uptime_s / 60)} min</dd>
          <dt>Store</dt><dd><span class={h.store.available ? 'state ok' : 'state bad'}>{h.store.available ? 'available' : 'unavailable'}</span> {h.store.engine} <span class="muted">{h.store.source}</span>, schema {h.store.schema_version}{h.store.error ? ` (${h.store.error})` : ''}</dd>
          <dt>Evaluation log</dt><dd>{h.store.log.enabled ? `${count(h.store.log.written)} written, ${count(h.store.log.queued)} queued, ${count(h.store.log.dropped)} dropped, ${count(h.store.log.failed)} failed, ${count(h.store.log.pruned)} pruned` : 'off'}</dd>
          <dt>Memory</dt><dd>{mib(h.memory.rss_bytes)} resident, heap {mib(h.memory.heap_used_bytes)} of {mib(h.memory.heap_total_bytes)}</dd>
        </dl>
      ) : <Loading what="health" />}
    </section>
  );
}
