import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok, type Answered, type ApiProblem } from '../../api/client';
import { DecisionCells } from '../../components/entities';
import { Field, Loading, Page, ProblemMessage, SelectField } from '../../components/ui';
import { usePages, useResource } from '../../hooks';
import { href, navigate } from '../../router';
import { useSession } from '../../session';
import { DecisionDetail } from './DecisionDetail';
import { isoToLocal, localToIso } from '../../time';
import { filterSegment, parseFilters, searchQuery, type Filters } from './filters';
import { StatesOverTime } from './StatesOverTime';

type Summary = Answered<'searchDecisions'>['decisions'][number];

const PAGE_SIZE = 50;
/** How often the first page is read again for new evaluations, while the tab is shown. */
export const POLL_MS = 10_000;

/**
 * Decisions: the account's evaluation log searched (`decisions/?filters`) and one decision
 * explained (`decisions/<id>`). Analysts and admins alike: both may read and label.
 */
export function Decisions({ rest }: { rest: string[] }) {
  const [first] = rest;
  if (first && !first.startsWith('?')) return <DecisionDetail key={first} id={first} />;
  return <DecisionLog filters={parseFilters(first)} />;
}

function DecisionLog({ filters }: { filters: Filters }) {
  const { account } = useSession();
  const key = filterSegment(filters);
  const log = usePages<Summary, string>(`${account}/${key}`, async (cursor) => {
    const page = await ok(api.GET('/admin/v1/accounts/{account}/decisions', { params: { path: { account: account! }, query: { ...searchQuery(filters), limit: PAGE_SIZE, cursor } } }));
    return { items: page.decisions, next: page.next_cursor };
  });
  const stats = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/decisions/stats', { params: { path: { account: account! }, query: searchQuery(filters) } })), [account, key]);
  useNewDecisions(`${account}/${key}`, filters, log.items[0]?.id, (asked, newer, more) => {
    if (more) void log.reload();
    else log.prepend(asked, newer);
    stats.reload();
  });
  const exportHref = `/admin/v1/accounts/${encodeURIComponent(account!)}/decisions/export${filterSegment(filters)}`;

  return (
    <Page title="Decisions" intro="Every evaluation this account made, newest first (kept RETENTION_DAYS). Filter, open one to see why it scored what it did, and label it fraud or legit.">
      <FilterForm filters={filters} problem={log.error} onSame={() => { void log.reload(); stats.reload(); }} />
      <p class="export"><a href={exportHref} download>Export these decisions as CSV</a> <span class="muted">(newest first, at most 10,000 rows)</span></p>
      {stats.data ? <StatesOverTime stats={stats.data} /> : null}
      {stats.error && !log.error ? <ProblemMessage problem={stats.error} /> : null}
      {log.error && log.error.errors.length === 0 ? <ProblemMessage problem={log.error} /> : null}
      <div class="table-scroll"><table class="decisions">
        <caption class="visually-hidden">Decisions, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th><th scope="col">Event</th><th scope="col">E-mail address</th><th scope="col">IP address</th><th scope="col">User</th>
            <th scope="col" class="num">Score</th><th scope="col">State</th><th scope="col">Rules fired</th><th scope="col">Label</th>
          </tr>
        </thead>
        <tbody>
          {log.items.map((d) => (
            <tr key={d.id}>
              <DecisionCells decision={d} />
              <td>{d.rules.length > 0 ? d.rules.map((r) => <code key={r} class="chip">{r}</code>) : <span class="muted">none</span>}</td>
              <td>{d.label ? <span class={d.label === 'fraud' ? 'state bad' : 'state ok'}>{d.label}</span> : <span class="muted">–</span>}</td>
            </tr>
          ))}
          {log.items.length === 0 && !log.busy && !log.error ? <tr><td colSpan={9} class="muted">No decision matches these filters.</td></tr> : null}
        </tbody>
      </table></div>
      {log.busy ? <Loading what="decisions" /> : null}
      {log.more ? <button type="button" onClick={log.more}>Older decisions</button> : null}
    </Page>
  );
}

/**
 * The filters as a form; applying it changes the URL, which loads the matching decisions. The form
 * stays the same elements across searches (focus stays on Search, its fields keep their ids); a URL
 * changed otherwise (back, a shared link) is shown in it.
 */
function FilterForm({ filters, problem, onSame }: { filters: Filters; problem: ApiProblem | undefined; onSame: () => void }) {
  const { account } = useSession();
  // The form shows times in the browser's zone; the URL keeps instants, so a shared link means the same range anywhere.
  const shown = (f: Filters): Filters => ({ ...f, from: f.from && isoToLocal(f.from), to: f.to && isoToLocal(f.to) });
  const [form, setForm] = useState<Filters>(() => shown(filters));
  const key = filterSegment(filters);
  useEffect(() => setForm(shown(filters)), [key]);
  const set = (name: keyof Filters) => (value: string) => setForm((f) => ({ ...f, [name]: value }));
  const input = (name: keyof Filters, label: string, extra: Record<string, unknown> = {}) => (
    <Field label={label} value={form[name] ?? ''} onInput={(e) => set(name)(e.currentTarget.value)} error={problem?.field(name)} {...extra} />
  );
  // The same filters again change no URL: the search is read again instead, so "Search" always refreshes.
  const apply = (next: Filters) => {
    const segment = filterSegment({ ...next, from: next.from && localToIso(next.from), to: next.to && localToIso(next.to) });
    if (segment === key) onSame();
    else navigate(href(account!, 'decisions', segment).replace(/\/$/, ''));
  };
  return (
    <form class="card filters" aria-label="Filters" onSubmit={(e) => { e.preventDefault(); apply(form); }}>
      <div class="filter-grid">
        <SelectField label="State" value={form.state ?? ''} onChange={set('state')} options={[['', 'any'], ['approve', 'approve'], ['review', 'review'], ['decline', 'decline']]} />
        {input('event_type', 'Event type', { placeholder: 'account_register' })}
        {input('from', 'From', { type: 'datetime-local' })}
        {input('to', 'To', { type: 'datetime-local' })}
        {input('email', 'E-mail address', { type: 'text', autoComplete: 'off' })}
        {input('domain', 'E-mail domain', { placeholder: 'example.com' })}
        {input('ip', 'IP address or CIDR', { placeholder: '203.0.113.0/24' })}
        {input('user_id', 'User id')}
        {input('device_hash', 'Device hash')}
        {input('rule', 'Rule fired', { placeholder: 'email_disposable' })}
        <SelectField label="Label" value={form.label ?? ''} onChange={set('label')} options={[['', 'any'], ['fraud', 'fraud'], ['legit', 'legit'], ['none', 'not labelled']]} />
      </div>
      <div class="actions">
        <button type="submit" class="primary">Search</button>
        <button type="button" onClick={() => { setForm({}); apply({}); }}>Clear filters</button>
      </div>
    </form>
  );
}

/**
 * New evaluations without a reload: every POLL_MS while the tab is shown (none while it is hidden,
 * one at once when it is shown again), the first page of the same search is read; what is newer
 * than the first row shown is handed to `found`, with `more` when a whole page is new (then the
 * list is read again rather than grown without bound).
 */
function useNewDecisions(key: string, filters: Filters, newest: string | undefined, found: (asked: string, newer: Summary[], more: boolean) => void) {
  const { account } = useSession();
  const latest = useRef({ newest, found });
  latest.current = { newest, found };
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    let reading = false;
    const poll = async () => {
      timer = undefined;
      reading = true;
      if (document.visibilityState === 'visible') {
        const page = await ok(api.GET('/admin/v1/accounts/{account}/decisions', { params: { path: { account: account! }, query: { ...searchQuery(filters), limit: PAGE_SIZE } } })).catch(() => undefined);
        const top = latest.current.newest;
        if (!stopped && page) {
          const newer = top === undefined ? page.decisions : page.decisions.filter((d) => d.id > top);
          if (newer.length > 0) latest.current.found(key, newer, newer.length === page.decisions.length && page.next_cursor !== null);
        }
      }
      reading = false;
      if (!stopped && document.visibilityState === 'visible') timer = setTimeout(() => void poll(), POLL_MS);
    };
    const shownAgain = () => {
      if (document.visibilityState === 'visible' && timer === undefined && !reading && !stopped) void poll();
      else if (document.visibilityState === 'hidden' && timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
    };
    timer = setTimeout(() => void poll(), POLL_MS);
    document.addEventListener('visibilitychange', shownAgain);
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      document.removeEventListener('visibilitychange', shownAgain);
    };
  }, [key]);
}
