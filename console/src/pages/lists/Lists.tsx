import { useState } from 'preact/hooks';
import { api, ok, type Answered, type ApiProblem } from '../../api/client';
import { Confirm, Field, Page, ProblemMessage, SelectField, Time } from '../../components/ui';
import { useAction, usePages } from '../../hooks';
import { useSession } from '../../session';
import { localToIso } from '../../time';

type Entry = Answered<'listListEntries'>['entries'][number];
type ListName = Entry['list'];
type Kind = Entry['kind'];

const KINDS: Array<[Kind, string, string]> = [
  ['email', 'E-mail address', 'jane.doe@example.com'],
  ['domain', 'E-mail domain (and its subdomains)', 'example.com'],
  ['ip', 'IP address or CIDR range', '203.0.113.0/24'],
  ['device', 'Device hash', '64 hexadecimal digits'],
  ['user', 'User id', 'u-1234'],
];
const kindName = (kind: Kind) => KINDS.find(([k]) => k === kind)?.[1] ?? kind;
const PAGE_SIZE = 100;

/**
 * The account's block and allow lists: what the `list_block` and `list_allow` library rules read on
 * the next evaluation. Analysts and admins both keep them (PRODUCT.md); every change is audited.
 */
export function Lists() {
  const { account } = useSession();
  const [filter, setFilter] = useState<{ list?: ListName; kind?: Kind; expired: boolean }>({ expired: false });
  const [removing, setRemoving] = useState<Entry | undefined>();
  const entries = usePages<Entry, number>(`${account}/${filter.list}/${filter.kind}/${filter.expired}`, async (before) => {
    const page = await ok(api.GET('/admin/v1/accounts/{account}/lists', {
      params: { path: { account: account! }, query: { list: filter.list, kind: filter.kind, include_expired: filter.expired ? 'true' : 'false', before, limit: PAGE_SIZE } },
    }));
    return { items: page.entries, next: page.next_before };
  });
  const remove = useAction(async (entry: Entry) => {
    await ok(api.DELETE('/admin/v1/accounts/{account}/lists/{entry_id}', { params: { path: { account: account!, entry_id: entry.id } } }));
    setRemoving(undefined);
    await entries.reload();
  });

  return (
    <Page title="Lists" intro="Addresses, domains, devices and users to block or to allow. The rules list_block and list_allow read them on the next evaluation, on every replica.">
      <AddEntry onAdded={() => void entries.reload()} />
      <section class="card" aria-labelledby="entries">
        <h2 id="entries">Entries</h2>
        <div class="inline-form">
          <SelectField label="List" value={filter.list ?? ''} options={[['', 'both'], ['block', 'block'], ['allow', 'allow']]} onChange={(v) => setFilter((f) => ({ ...f, list: (v || undefined) as ListName | undefined }))} />
          <SelectField label="Kind" value={filter.kind ?? ''} options={[['', 'any'], ...KINDS.map(([k, name]): [string, string] => [k, name])]} onChange={(v) => setFilter((f) => ({ ...f, kind: (v || undefined) as Kind | undefined }))} />
          <label class="check"><input type="checkbox" checked={filter.expired} onChange={(e) => setFilter((f) => ({ ...f, expired: e.currentTarget.checked }))} /> Show expired entries</label>
        </div>
        <ProblemMessage problem={entries.error} />
        <table>
          <thead><tr><th scope="col">List</th><th scope="col">Kind</th><th scope="col">Value</th><th scope="col">Reason</th><th scope="col">Added</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {entries.items.map((e) => (
              <tr key={e.id}>
                <td><span class={e.list === 'block' ? 'state bad' : 'state ok'}>{e.list}</span></td>
                <td>{kindName(e.kind)}</td>
                <td class="wrap list-value"><code>{e.value}</code></td>
                <td class="wrap">{e.reason}</td>
                <td><Time at={e.created_at} /> <span class="muted">by <code>{e.author}</code></span></td>
                <td><Time at={e.expires_at} empty="never" /></td>
                <td class="row-actions"><button type="button" class="danger" onClick={() => setRemoving(e)} aria-label={`Remove ${e.value} from the ${e.list} list`}>Remove</button></td>
              </tr>
            ))}
            {entries.items.length === 0 && !entries.busy ? <tr><td colSpan={7} class="muted">No entry.</td></tr> : null}
          </tbody>
        </table>
        {entries.more ? <button type="button" onClick={entries.more}>More entries</button> : null}
      </section>
      {removing ? (
        <Confirm title={`Remove ${removing.value}?`} action="Remove entry" busy={remove.busy} problem={remove.error} onCancel={() => { setRemoving(undefined); remove.clear(); }} onConfirm={() => void remove.run(removing)}>
          <p>
            {removing.list === 'block'
              ? <>The next evaluation with this {kindName(removing.kind).toLowerCase()} is no longer blocked by the list: <code>list_block</code> stops firing on it.</>
              : <>The next evaluation with this {kindName(removing.kind).toLowerCase()} is no longer allowed by the list: <code>list_allow</code> stops lowering its score.</>}
          </p>
        </Confirm>
      ) : null}
    </Page>
  );
}

function AddEntry({ onAdded }: { onAdded: () => void }) {
  const { account } = useSession();
  const [list, setList] = useState<ListName>('block');
  const [kind, setKind] = useState<Kind>('email');
  const [value, setValue] = useState('');
  const [reason, setReason] = useState('');
  const [expires, setExpires] = useState('');
  const add = useAction(async () => {
    await ok(api.POST('/admin/v1/accounts/{account}/lists', {
      params: { path: { account: account! } },
      body: { list, kind, value, reason, ...(expires ? { expires_at: localToIso(expires) } : {}) },
    }));
    setValue('');
    setReason('');
    setExpires('');
    onAdded();
  });
  const problem: ApiProblem | undefined = add.error;
  const named = new Set(problem?.errors.map((e) => e.path));
  return (
    <form class="card" aria-labelledby="add-entry" onSubmit={(e) => { e.preventDefault(); void add.run(); }}>
      <h2 id="add-entry">Add an entry</h2>
      <div class="inline-form">
        <SelectField label="List" value={list} options={[['block', 'block'], ['allow', 'allow']]} onChange={(v) => setList(v as ListName)} />
        <SelectField label="Kind" value={kind} options={KINDS.map(([k, name]): [string, string] => [k, name])} onChange={(v) => setKind(v as Kind)} />
        <Field label="Value" value={value} required placeholder={KINDS.find(([k]) => k === kind)?.[2]} onInput={(e) => setValue(e.currentTarget.value)} error={problem?.field('value')} />
        <Field label="Reason" value={reason} required maxLength={500} onInput={(e) => setReason(e.currentTarget.value)} error={problem?.field('reason')} />
        <Field label="Expires (optional)" type="datetime-local" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} error={problem?.field('expires_at')} />
        <button type="submit" class="primary" disabled={add.busy}>Add</button>
      </div>
      {/* What the API said that no field above shows (a full list, an unreachable store). */}
      {problem && !['value', 'reason', 'expires_at'].some((f) => named.has(f)) ? <ProblemMessage problem={problem} /> : null}
    </form>
  );
}
