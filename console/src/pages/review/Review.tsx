import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Answered, type ApiProblem } from '../../api/client';
import { EntityLink, PeopleNames, Person, shortDevice } from '../../components/entities';
import { Field, Loading, Page, ProblemMessage, SelectField, StateBadge, Time } from '../../components/ui';
import { asProblem, useAction, usePages, useResource } from '../../hooks';
import { href, navigate } from '../../router';
import { useSession } from '../../session';

type Item = Answered<'getReviewItem'>;
type Decision = Answered<'getDecision'>;

const PAGE_SIZE = 50;
const FILTERS = ['status', 'event_type', 'rule', 'assignee'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** Tells the navigation's counts that the queue changed (a claim, a release, a resolution). */
export const queueChanged = () => dispatchEvent(new Event('review-queue-changed'));

/**
 * The review queue (PRODUCT.md "Review"): the evaluations answered `review`, oldest first, each held
 * until an analyst approves or declines it. `review/?filters` lists them; `review/<evaluation id>`
 * is one item: claim it, read why it scored what it did, resolve it (and block what it came from).
 */
export function Review({ rest }: { rest: string[] }) {
  const [first] = rest;
  return (
    <PeopleNames>
      {first && !first.startsWith('?') ? <ReviewItem key={first} id={first} /> : <Queue filters={parseFilters(first)} />}
    </PeopleNames>
  );
}

function parseFilters(segment: string | undefined): Filters {
  const params = new URLSearchParams(segment?.startsWith('?') ? segment.slice(1) : '');
  return Object.fromEntries(FILTERS.flatMap((name) => (params.get(name) ? [[name, params.get(name)!]] : [])));
}
const segmentOf = (filters: Filters) => {
  const text = new URLSearchParams(Object.entries(filters).filter(([, v]) => v) as Array<[string, string]>).toString();
  return text ? `?${text}` : '';
};

/** An age as people say it: 40 s, 12 min, 3 h 5 min, 2 d 4 h. */
export function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  return `${Math.floor(hours / 24)} d${hours % 24 ? ` ${hours % 24} h` : ''}`;
}

function Queue({ filters }: { filters: Filters }) {
  const { account, session } = useSession();
  const key = segmentOf(filters);
  const query = { status: (filters.status ?? 'unresolved') as 'unresolved', event_type: filters.event_type, rule: filters.rule, assignee: filters.assignee };
  const queue = usePages<Item, string>(`${account}/${key}`, async (after) => {
    const page = await ok(api.GET('/admin/v1/accounts/{account}/review-items', { params: { path: { account: account! }, query: { ...query, after, limit: PAGE_SIZE } } }));
    return { items: page.items, next: page.next_after };
  });
  const act = useAction(async (id: string, what: 'claim' | 'release') => {
    const path = { account: account!, id };
    if (what === 'claim') await ok(api.POST('/admin/v1/accounts/{account}/review-items/{id}/claim', { params: { path } }));
    else await ok(api.POST('/admin/v1/accounts/{account}/review-items/{id}/release', { params: { path } }));
    queueChanged();
    await queue.reload();
  });
  const me = session.user ? `user:${session.user.id}` : undefined;
  const problem = act.error ?? queue.error;
  return (
    <Page title="Review" intro="Evaluations answered review wait here, oldest first, until someone approves or declines them. Claim one so no colleague works on it too; the caller's backend learns the outcome.">
      <QueueFilters filters={filters} me={me} problem={queue.error} />
      {problem && problem.errors.length === 0 ? <ProblemMessage problem={problem} /> : null}
      <div class="table-scroll">
        <table class="queue">
          <caption class="visually-hidden">Review items, oldest first</caption>
          <thead>
            <tr><th scope="col">Waiting</th><th scope="col">Event</th><th scope="col">E-mail address</th><th scope="col">User</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {queue.items.map((item) => (
              <tr key={item.evaluation_id}>
                <td class="nowrap"><a href={href(account!, 'review', item.evaluation_id)}>{age(item.age_seconds)}<span class="visually-hidden">: review item {item.email}</span></a><br /><small class="muted"><Time at={item.opened_at} /></small></td>
                <td><code>{item.event_type}</code></td>
                <td><EntityLink kind="email" value={item.email} /></td>
                <td>{item.user_id ? <EntityLink kind="user" value={item.user_id} /> : <span class="muted">not sent</span>}</td>
                <td><ItemStatus item={item} /></td>
                <td class="row-actions">
                  {item.status === 'open' ? <button type="button" disabled={act.busy} onClick={() => void act.run(item.evaluation_id, 'claim')}>Claim<span class="visually-hidden"> {item.email}</span></button> : null}
                  {item.status === 'claimed' ? <button type="button" disabled={act.busy} onClick={() => void act.run(item.evaluation_id, 'release')}>Release<span class="visually-hidden"> {item.email}</span></button> : null}
                  {item.status !== 'resolved' ? <a class="button-link" href={href(account!, 'review', item.evaluation_id)}>Open<span class="visually-hidden"> {item.email}</span></a> : null}
                </td>
              </tr>
            ))}
            {queue.items.length === 0 && !queue.busy && !queue.error ? <tr><td colSpan={6} class="muted">Nothing waits for review with these filters.</td></tr> : null}
          </tbody>
        </table>
      </div>
      {queue.busy ? <Loading what="the queue" /> : null}
      {queue.more ? <button type="button" onClick={queue.more}>Newer items</button> : null}
    </Page>
  );
}

export function ItemStatus({ item }: { item: Item }) {
  if (item.status === 'open') return <span>open</span>;
  if (item.status === 'claimed') return <span>claimed by {item.assignee ? <Person actor={item.assignee} /> : 'someone'}</span>;
  return (
    <span>
      <StateBadge state={item.resolution ?? 'review'} /> by {item.resolved_by ? <Person actor={item.resolved_by} /> : 'someone'}, <Time at={item.resolved_at} />
    </span>
  );
}

function QueueFilters({ filters, me, problem }: { filters: Filters; me: string | undefined; problem: ApiProblem | undefined }) {
  const { account } = useSession();
  const [form, setForm] = useState<Filters>(filters);
  const key = segmentOf(filters);
  useEffect(() => setForm(filters), [key]);
  const set = (name: keyof Filters) => (value: string) => setForm((f) => ({ ...f, [name]: value }));
  const apply = (next: Filters) => navigate(href(account!, 'review', segmentOf(next)).replace(/\/$/, ''));
  return (
    <form class="card filters" aria-label="Filters" onSubmit={(e) => { e.preventDefault(); apply(form); }}>
      <div class="filter-grid">
        <SelectField label="Status" value={form.status ?? ''} onChange={set('status')}
          options={[['', 'waiting (open or claimed)'], ['open', 'open'], ['claimed', 'claimed'], ['resolved', 'resolved']]} />
        <Field label="Event type" value={form.event_type ?? ''} placeholder="account_register" onInput={(e) => set('event_type')(e.currentTarget.value)} error={problem?.field('event_type')} />
        <Field label="Rule fired" value={form.rule ?? ''} placeholder="email_disposable" onInput={(e) => set('rule')(e.currentTarget.value)} error={problem?.field('rule')} />
        <SelectField label="Assignee" value={form.assignee ?? ''} onChange={set('assignee')} options={[['', 'anyone'], ...(me ? [[me, 'me'] as [string, string]] : [])]} />
      </div>
      <div class="actions">
        <button type="submit" class="primary">Search</button>
        <button type="button" onClick={() => { setForm({}); apply({}); }}>Clear filters</button>
      </div>
    </form>
  );
}

/** One item: what the evaluation was, claim or release it, resolve it. */
function ReviewItem({ id }: { id: string }) {
  const { account } = useSession();
  const path = { account: account!, id };
  const item = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/review-items/{id}', { params: { path } })), [account, id]);
  const decision = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/decisions/{id}', { params: { path } })), [account, id]);
  const act = useAction(async (what: 'claim' | 'release') => {
    if (what === 'claim') await ok(api.POST('/admin/v1/accounts/{account}/review-items/{id}/claim', { params: { path } }));
    else await ok(api.POST('/admin/v1/accounts/{account}/review-items/{id}/release', { params: { path } }));
    queueChanged();
    item.reload();
  });
  const i = item.data;
  const d = decision.data;
  return (
    <Page title="Review item">
      <p><a href={href(account!, 'review')}>← The queue</a></p>
      <ProblemMessage problem={item.error ?? decision.error} />
      {!i && item.loading ? <Loading what="the item" /> : null}
      {i ? (
        <section class="card" aria-labelledby="item-status">
          <h2 id="item-status">Waiting {age(i.age_seconds)}: <ItemStatus item={i} /></h2>
          {i.status === 'resolved' && i.reason ? <p>Reason: “{i.reason}”</p> : null}
          <div class="actions">
            {i.status === 'open' ? <button type="button" class="primary" disabled={act.busy} onClick={() => void act.run('claim')}>Claim</button> : null}
            {i.status === 'claimed' ? <button type="button" disabled={act.busy} onClick={() => void act.run('release')}>Release</button> : null}
          </div>
          <ProblemMessage problem={act.error} />
        </section>
      ) : null}
      {d ? <DecisionFacts d={d} /> : decision.loading ? <Loading what="the evaluation" /> : null}
      {i && d && i.status !== 'resolved' ? <ResolveForm item={i} d={d} onResolved={() => { queueChanged(); item.reload(); decision.reload(); }} /> : null}
    </Page>
  );
}

function DecisionFacts({ d }: { d: Decision }) {
  const { account } = useSession();
  return (
    <section class="card" aria-labelledby="evaluation">
      <h2 id="evaluation">The evaluation: <StateBadge state={d.state} />, score {d.score}</h2>
      <dl class="facts">
        <dt>Evaluated</dt><dd><Time at={d.evaluated_at} /> (<a href={href(account!, 'decisions', d.id)}>why it scored {d.score}</a>)</dd>
        <dt>Rules fired</dt><dd>{d.rules.length > 0 ? d.rules.map((r) => <code key={r} class="chip">{r}</code>) : <span class="muted">none</span>}</dd>
        <dt>E-mail address</dt><dd><EntityLink kind="email" value={d.email} /> (<EntityLink kind="domain" value={d.email_domain} />)</dd>
        <dt>IP address</dt><dd><EntityLink kind="ip" value={d.ip} /></dd>
        <dt>User</dt><dd>{d.user_id ? <EntityLink kind="user" value={d.user_id} /> : <span class="muted">not sent</span>}</dd>
        <dt>Device</dt><dd>{d.device_hash ? <EntityLink kind="device" value={d.device_hash} /> : <span class="muted">not sent</span>}</dd>
        <dt>Label</dt><dd>{d.label ?? <span class="muted">not labelled</span>}</dd>
      </dl>
    </section>
  );
}

type Block = 'device' | 'ip' | 'email';

/** Approve or decline, with a reason; a decline may block the device, IP address or e-mail address in the same step. */
function ResolveForm({ item, d, onResolved }: { item: Item; d: Decision; onResolved: () => void }) {
  const { account } = useSession();
  const [resolution, setResolution] = useState<'approve' | 'decline' | ''>('');
  const [reason, setReason] = useState('');
  const [blocks, setBlocks] = useState<Set<Block>>(new Set());
  const [missing, setMissing] = useState<{ resolution?: boolean; reason?: boolean }>({});
  const [conflict, setConflict] = useState<Item | undefined>();
  const dirty = resolution !== '' || reason.trim() !== '' || blocks.size > 0;
  useUnsavedWarning(dirty);
  const values: Record<Block, string | null> = { device: d.device_hash, ip: d.ip, email: d.email };
  const resolve = useAction(async () => {
    const wanted = { resolution: resolution === '', reason: reason.trim() === '' };
    setMissing(wanted);
    if (wanted.resolution || wanted.reason) return;
    const entries = resolution === 'decline' ? [...blocks].flatMap((kind) => (values[kind] ? [{ list: 'block' as const, kind, value: values[kind] }] : [])) : [];
    try {
      await ok(api.POST('/admin/v1/accounts/{account}/review-items/{id}/resolve', {
        params: { path: { account: account!, id: item.evaluation_id } },
        body: { resolution: resolution as 'approve' | 'decline', reason: reason.trim(), ...(entries.length > 0 ? { entries } : {}) },
      }));
    } catch (error) {
      const problem = asProblem(error);
      // Someone else got there first: say who and what, from the item as it is now.
      if (problem.status === 409) {
        const now = await ok(api.GET('/admin/v1/accounts/{account}/review-items/{id}', { params: { path: { account: account!, id: item.evaluation_id } } })).catch(() => undefined);
        if (now && (now.status === 'resolved' || (now.status === 'claimed' && now.assignee !== item.assignee))) {
          setConflict(now);
          return;
        }
      }
      throw problem;
    }
    setResolution('');
    setReason('');
    setBlocks(new Set());
    onResolved();
  });
  const toggle = (kind: Block) => setBlocks((now) => {
    const next = new Set(now);
    if (next.has(kind)) next.delete(kind);
    else next.add(kind);
    return next;
  });
  const blockLabel: Record<Block, string> = { device: 'Block this device', ip: 'Block this IP address', email: 'Block this e-mail address' };
  return (
    <section class="card" aria-labelledby="resolve">
      <h2 id="resolve">Resolve</h2>
      {conflict ? (
        <div class="problem" role="alert">
          <strong>{conflict.status === 'resolved' ? 'Someone resolved this item first.' : 'Someone else claimed this item.'}</strong>{' '}
          <ItemStatus item={conflict} />{conflict.reason ? <>: “{conflict.reason}”</> : null}. Your resolution was not saved.
        </div>
      ) : null}
      <form onSubmit={(e) => { e.preventDefault(); void resolve.run(); }} noValidate>
        <fieldset class="choice" aria-describedby={missing.resolution ? 'resolution-error' : undefined}>
          <legend>Outcome</legend>
          <label><input type="radio" name="resolution" value="approve" checked={resolution === 'approve'} onChange={() => { setResolution('approve'); setMissing((m) => ({ ...m, resolution: false })); }} /> Approve: it was a real user</label>
          <label><input type="radio" name="resolution" value="decline" checked={resolution === 'decline'} onChange={() => { setResolution('decline'); setMissing((m) => ({ ...m, resolution: false })); }} /> Decline: it was abuse</label>
          {missing.resolution ? <small id="resolution-error" class="field-error">Choose approve or decline.</small> : null}
        </fieldset>
        {resolution === 'decline' ? (
          <fieldset class="choice">
            <legend>Also block, from now on</legend>
            {(['device', 'ip', 'email'] as const).map((kind) => (values[kind] ? (
              <label key={kind}><input type="checkbox" checked={blocks.has(kind)} onChange={() => toggle(kind)} /> {blockLabel[kind]} <span class="value mono">{kind === 'device' ? shortDevice(values[kind]) : values[kind]}</span></label>
            ) : null))}
          </fieldset>
        ) : null}
        <div class="field">
          <label for="resolve-reason">Reason</label>
          <textarea id="resolve-reason" rows={3} maxLength={500} value={reason} aria-invalid={missing.reason ? true : undefined} aria-describedby={missing.reason ? 'resolve-reason-error' : 'resolve-reason-hint'}
            onInput={(e) => { setReason(e.currentTarget.value); setMissing((m) => ({ ...m, reason: false })); }} />
          {missing.reason ? <small id="resolve-reason-error" class="field-error">Enter a reason: whoever reads this next needs it.</small>
            : <small id="resolve-reason-hint">Kept with the resolution and the label, and sent to the caller's backend.</small>}
        </div>
        <div class="actions"><button type="submit" class="primary" disabled={resolve.busy}>Resolve</button></div>
      </form>
      <ProblemMessage problem={resolve.error} />
    </section>
  );
}

/** Warns before the page is left (reload, closing the tab) with an edit not saved. */
export function useUnsavedWarning(dirty: boolean) {
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => {
      event.preventDefault();
    };
    addEventListener('beforeunload', warn);
    return () => removeEventListener('beforeunload', warn);
  }, [dirty]);
}

/** "12 open · 2 claimed" beside Review in the navigation: read on every page change and after each change to the queue. */
export function ReviewCounts({ place }: { place: string }) {
  const { account } = useSession();
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const changed = () => setGeneration((g) => g + 1);
    addEventListener('review-queue-changed', changed);
    return () => removeEventListener('review-queue-changed', changed);
  }, []);
  const counts = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/review-items/counts', { params: { path: { account: account! } } })), [account, place, generation]);
  if (!counts.data) return null;
  return <span class="counts"> <span class="count">{counts.data.open} open</span> <span class="count">{counts.data.claimed} claimed</span></span>;
}
