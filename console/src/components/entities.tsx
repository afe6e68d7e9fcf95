import { createContext, type ComponentChildren } from 'preact';
import { useContext, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useAction, useResource } from '../hooks';
import { href } from '../router';
import { useSession } from '../session';
import { Confirm, StateBadge, Time } from './ui';

/**
 * What the review queue, the entity pages and a decision's page share: people named by e-mail
 * address (not `user:usr_…`), each value a link to its entity's page, and "Block" buttons.
 */
export type EntityKind = 'email' | 'domain' | 'ip' | 'device' | 'user';

export const ENTITY_NAMES: Record<EntityKind, string> = { email: 'E-mail address', domain: 'E-mail domain', ip: 'IP address', device: 'Device', user: 'User' };

/** The kind in a sentence: `Block IP address`, `block this device`. */
export const entityNoun = (kind: EntityKind) => (kind === 'ip' ? 'IP address' : ENTITY_NAMES[kind].toLowerCase());

const Names = createContext<Map<string, string>>(new Map());

/** The account's people (`GET …/people`, analysts too), for `<Person>` below it. */
export function PeopleNames({ children }: { children: ComponentChildren }) {
  const { account, session } = useSession();
  const people = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/people', { params: { path: { account: account! } } })), [account]);
  const names = new Map((people.data?.people ?? []).map((p) => [p.actor, p.name]));
  if (session.user) names.set(`user:${session.user.id}`, session.user.email);
  return <Names.Provider value={names}>{children}</Names.Provider>;
}

/** A `user:…` or `token:…` actor by name; the id itself when it is not one of the account's people (removed since). */
export function Person({ actor }: { actor: string }) {
  const { session } = useSession();
  const name = useContext(Names).get(actor);
  if (session.user && actor === `user:${session.user.id}`) return <span class="value" title={actor}>you ({session.user.email})</span>;
  return name ? <span class="value" title={actor}>{name}</span> : <span class="mono value">{actor}</span>;
}

/** A device hash is 64 hex digits: shown by its ends, whole in the title and to screen readers through the link's name. */
export const shortDevice = (hash: string) => (hash.length > 20 ? `${hash.slice(0, 8)}…${hash.slice(-6)}` : hash);

export const entityHref = (account: string, kind: EntityKind, value: string) => href(account, 'entity', kind, value);

/** A value as a link to its entity's page; never wrapped inside itself. */
export function EntityLink({ kind, value }: { kind: EntityKind; value: string }) {
  const { account } = useSession();
  const text = kind === 'device' ? shortDevice(value) : value;
  return (
    <a class={kind === 'ip' || kind === 'device' ? 'value mono' : 'value'} href={entityHref(account!, kind, value)} title={text === value ? undefined : value}>
      {text}{text === value ? null : <span class="visually-hidden"> ({entityNoun(kind)} {value})</span>}
    </a>
  );
}

/** What a row of decisions shows first, on the Decisions page and an entity's page alike. */
export interface DecisionSummary {
  id: string; evaluated_at: string; event_type: string; email: string; ip: string; user_id?: string | null; score: number; state: 'approve' | 'review' | 'decline';
}

/** A decision's first seven cells: when (a link to it), event, e-mail address, IP address, user, score, state. */
export function DecisionCells({ decision: d }: { decision: DecisionSummary }) {
  const { account } = useSession();
  return (
    <>
      <td class="nowrap"><a href={href(account!, 'decisions', d.id)}><Time at={d.evaluated_at} /><span class="visually-hidden">, decision {d.id}</span></a></td>
      <td><code>{d.event_type}</code></td>
      <td><EntityLink kind="email" value={d.email} /></td>
      <td><EntityLink kind="ip" value={d.ip} /></td>
      <td>{d.user_id ? <EntityLink kind="user" value={d.user_id} /> : <span class="muted">not sent</span>}</td>
      <td class="num">{d.score}</td>
      <td><StateBadge state={d.state} /></td>
    </>
  );
}

/**
 * Adds the value to the block list, with a reason (required: whoever reads the list next needs it);
 * audited by the API. Confirmed in a dialog; says so once done.
 */
export function BlockButton({ kind, value, onBlocked }: { kind: EntityKind; value: string; onBlocked?: () => void }) {
  const { account } = useSession();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [missing, setMissing] = useState(false);
  const [done, setDone] = useState(false);
  const what = `${entityNoun(kind)} ${kind === 'device' ? shortDevice(value) : value}`;
  const block = useAction(async () => {
    if (reason.trim() === '') {
      setMissing(true);
      return;
    }
    await ok(api.POST('/admin/v1/accounts/{account}/lists', { params: { path: { account: account! } }, body: { list: 'block', kind, value, reason: reason.trim() } }));
    setOpen(false);
    setDone(true);
    onBlocked?.();
  });
  return (
    <>
      <button type="button" class="danger" onClick={() => { setOpen(true); setMissing(false); block.clear(); }}>Block {entityNoun(kind)}</button>
      {done ? <span role="status" class="muted"> Blocked: its next evaluations decline.</span> : null}
      {open ? (
        <Confirm title={`Block ${what}?`} action="Block" busy={block.busy} problem={block.error} onCancel={() => setOpen(false)} onConfirm={() => void block.run()}>
          <p>Every evaluation with this {entityNoun(kind)} declines from now on, until the entry is removed from the Lists page.</p>
          <div class="field">
            <label for="block-reason">Reason</label>
            <textarea id="block-reason" rows={2} maxLength={500} value={reason} aria-invalid={missing ? true : undefined} aria-describedby={missing ? 'block-reason-error' : undefined}
              onInput={(e) => { setReason(e.currentTarget.value); setMissing(false); }} />
            {missing ? <small id="block-reason-error" class="field-error">Enter a reason: whoever reads the list next needs it.</small> : null}
          </div>
        </Confirm>
      ) : null}
    </>
  );
}
