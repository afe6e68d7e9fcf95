import { api, ok, type Answered } from '../../api/client';
import { Page, ProblemMessage, ScrollingText, Time } from '../../components/ui';
import { usePages } from '../../hooks';
import { useSession } from '../../session';

type Entry = Answered<'listAccountAudit'>['entries'][number];

const PAGE_SIZE = 50;
const json = (value: unknown) => (value === null || value === undefined ? '' : JSON.stringify(value, null, 2));

/** Every change made in the account (who, when, what, before and after; never a secret), newest first. */
export function Audit() {
  const { account } = useSession();
  const entries = usePages<Entry, number>(account ?? '', async (before) => {
    const page = await ok(api.GET('/admin/v1/accounts/{account}/audit', { params: { path: { account: account! }, query: { limit: PAGE_SIZE, before } } }));
    return { items: page.entries, next: page.next_before };
  });
  return (
    <Page title="Audit log" intro={`Every change made in ${account ?? 'the account'} through the console, the admin API or the command line, newest first.`}>
      <ProblemMessage problem={entries.error} />
      <table>
        <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">Change</th></tr></thead>
        <tbody>
          {entries.items.map((e) => (
            <tr key={e.id}>
              <td><Time at={e.at} /></td>
              <td><code>{e.actor}</code></td>
              <td><code>{e.action}</code></td>
              <td>{e.target ?? <span class="muted">–</span>}</td>
              <td>
                {e.before !== null || e.after !== null ? (
                  <details>
                    <summary>Before and after</summary>
                    <div class="diff"><ScrollingText label="Before">{json(e.before) || '(nothing)'}</ScrollingText><ScrollingText label="After">{json(e.after) || '(nothing)'}</ScrollingText></div>
                  </details>
                ) : <span class="muted">–</span>}
              </td>
            </tr>
          ))}
          {entries.items.length === 0 && !entries.busy ? <tr><td colSpan={5} class="muted">No change recorded yet.</td></tr> : null}
        </tbody>
      </table>
      {entries.more ? <button type="button" onClick={entries.more}>Older entries</button> : null}
    </Page>
  );
}
