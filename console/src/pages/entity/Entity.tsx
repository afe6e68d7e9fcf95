import { Fragment } from 'preact';
import { api, ok, type Answered } from '../../api/client';
import { BlockButton, DecisionCells, ENTITY_NAMES, EntityLink, PeopleNames, Person, shortDevice, type EntityKind } from '../../components/entities';
import { Loading, Page, ProblemMessage, StateBadge, Time } from '../../components/ui';
import { usePages, useResource } from '../../hooks';
import { href } from '../../router';
import { useSession } from '../../session';

type Summary = Answered<'searchDecisions'>['decisions'][number];
const KINDS: EntityKind[] = ['email', 'domain', 'ip', 'device', 'user'];
const FILTER: Record<EntityKind, 'email' | 'domain' | 'ip' | 'device_hash' | 'user_id'> = { email: 'email', domain: 'domain', ip: 'ip', device: 'device_hash', user: 'user_id' };
const PAGE_SIZE = 25;

/**
 * An entity's page (`entity/<kind>/<value>`): an e-mail address, domain, IP address, device or user
 * as the evaluation log knows it: when it was first and last seen, its evaluations, labels and
 * list entries, and what it was seen with, each a link to its own page. "Block" adds it to the
 * block list.
 */
export function Entity({ rest }: { rest: string[] }) {
  const [kind, value] = rest;
  if (!kind || !KINDS.includes(kind as EntityKind) || !value) {
    return <Page title="Not found"><p>This link names no e-mail address, domain, IP address, device or user.</p></Page>;
  }
  return <PeopleNames><EntityPage key={`${kind}/${value}`} kind={kind as EntityKind} value={value} /></PeopleNames>;
}

function EntityPage({ kind, value }: { kind: EntityKind; value: string }) {
  const { account } = useSession();
  const entity = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/entities/{kind}', { params: { path: { account: account!, kind }, query: { value } } })), [account, kind, value]);
  const e = entity.data;
  const shown = e?.value ?? value;
  return (
    <Page title={`${ENTITY_NAMES[kind]} ${kind === 'device' ? shortDevice(shown) : shown}`}>
      <p><a href={href(account!, 'decisions')}>← Decisions</a> · <a href={href(account!, 'review')}>Review</a></p>
      <ProblemMessage problem={entity.error} />
      {!e && entity.loading ? <Loading what={ENTITY_NAMES[kind].toLowerCase()} /> : null}
      {e ? (
        <>
          <section class="card" aria-labelledby="seen">
            <h2 id="seen">Seen</h2>
            {kind === 'device' ? <p class="value mono wrap-anywhere">{e.value}</p> : null}
            {e.scanned === 0 ? <p class="muted">Not in the log (kept RETENTION_DAYS).</p> : (
              <dl class="facts">
                <dt>First seen</dt><dd><Time at={e.first_seen} /></dd>
                <dt>Last seen</dt><dd><Time at={e.last_seen} /></dd>
                <dt>{e.scanned === 500 ? 'Latest 500' : `${e.scanned} evaluation${e.scanned === 1 ? '' : 's'}`}</dt>
                <dd><StateBadge state="approve" /> {e.states.approve}, <StateBadge state="review" /> {e.states.review}, <StateBadge state="decline" /> {e.states.decline}</dd>
                <dt>Labels</dt><dd>{e.labels.fraud + e.labels.legit === 0 ? <span class="muted">none</span> : <>{e.labels.fraud} fraud, {e.labels.legit} legit</>}</dd>
              </dl>
            )}
            <div class="actions"><BlockButton kind={kind} value={e.value} onBlocked={entity.reload} /></div>
          </section>
          <section class="card" aria-labelledby="lists">
            <h2 id="lists">List entries</h2>
            {e.list_entries.length === 0 ? <p class="muted">On no list.</p> : (
              <ul>
                {e.list_entries.map((l) => (
                  <li key={l.id}>On the <strong>{l.list}</strong> list since <Time at={l.created_at} />, by <Person actor={l.author} />: “{l.reason}”{l.expires_at ? <> (until <Time at={l.expires_at} />)</> : null}</li>
                ))}
              </ul>
            )}
          </section>
          <Linked e={e} />
        </>
      ) : null}
      <Evaluations kind={kind} value={value} />
    </Page>
  );
}

function Linked({ e }: { e: Answered<'getEntity'> }) {
  const groups: Array<[string, EntityKind | null, string[]]> = [
    ['Users', 'user', e.linked.users], ['Devices', 'device', e.linked.devices], ['IP addresses', 'ip', e.linked.ips],
    ['E-mail addresses', 'email', e.linked.emails], ['E-mail domains', 'domain', e.linked.domains], ['Countries', null, e.linked.countries],
  ];
  const shown = groups.filter(([, kind, values]) => values.length > 0 && kind !== e.kind);
  return (
    <section class="card" aria-labelledby="linked">
      <h2 id="linked">Seen with</h2>
      {shown.length === 0 ? <p class="muted">Nothing else in its evaluations.</p> : (
        <dl class="facts">
          {shown.map(([title, kind, values]) => (
            <Fragment key={title}>
              <dt>{title}</dt>
              <dd><ul class="links">{values.map((v) => <li key={v}>{kind ? <EntityLink kind={kind} value={v} /> : <span class="value">{v}</span>}</li>)}</ul></dd>
            </Fragment>
          ))}
        </dl>
      )}
      {e.scanned > 0 ? <p class="muted">From its latest {e.scanned} evaluation{e.scanned === 1 ? '' : 's'}.</p> : null}
    </section>
  );
}

function Evaluations({ kind, value }: { kind: EntityKind; value: string }) {
  const { account } = useSession();
  const log = usePages<Summary, string>(`${account}/${kind}/${value}`, async (cursor) => {
    const page = await ok(api.GET('/admin/v1/accounts/{account}/decisions', { params: { path: { account: account! }, query: { [FILTER[kind]]: value, limit: PAGE_SIZE, cursor } } }));
    return { items: page.decisions, next: page.next_cursor };
  });
  return (
    <section class="card" aria-labelledby="evaluations">
      <h2 id="evaluations">Evaluations, newest first</h2>
      {log.error ? <ProblemMessage problem={log.error} /> : (
        <div class="table-scroll">
          <table>
            <thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">E-mail address</th><th scope="col">IP address</th><th scope="col">User</th><th scope="col" class="num">Score</th><th scope="col">State</th></tr></thead>
            <tbody>
              {log.items.map((d) => (
                <tr key={d.id}>
                  <DecisionCells decision={d} />
                </tr>
              ))}
              {log.items.length === 0 && !log.busy ? <tr><td colSpan={7} class="muted">None in the log.</td></tr> : null}
            </tbody>
          </table>
        </div>
      )}
      {log.busy ? <Loading what="evaluations" /> : null}
      {log.more ? <button type="button" onClick={log.more}>Older evaluations</button> : null}
    </section>
  );
}
