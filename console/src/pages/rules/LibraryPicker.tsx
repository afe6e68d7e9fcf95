import { api, ok } from '../../api/client';
import { Loading, ProblemMessage } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import { useSession } from '../../session';
import { SPEC_RULES, type LibraryRule, type WrittenRule } from './types';

/** Every library rule, the five core sign-up checks (the spec's §1.6) first, each with an Add button (at its default score). */
export function LibraryPicker({ eventType, present, onAdded, onClose }: { eventType: string; present: string[]; onAdded: () => void; onClose: () => void }) {
  const { account } = useSession();
  const library = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rules/library', { params: { path: { account: account! } } })), [account]);
  const add = useAction(async (rule: LibraryRule) => {
    await ok(api.POST('/admin/v1/accounts/{account}/rule-sets/{event_type}/draft/rules', {
      params: { path: { account: account!, event_type: eventType } },
      body: { rule: { library: rule.id as WrittenRule['library'] } },
    }));
    onAdded();
  });
  const rules = library.data?.rules ?? [];
  const groups = [
    { title: 'Core sign-up checks: throwaway or unreachable e-mail, proxies, data centres, Tor', rules: SPEC_RULES.map((id) => rules.find((r) => r.id === id)).filter((r): r is LibraryRule => r !== undefined) },
    { title: 'More checks: e-mail, network, device, behaviour and your lists', rules: rules.filter((r) => !SPEC_RULES.includes(r.id)) },
  ];
  return (
    <section class="card picker" aria-labelledby="library-title">
      <div class="picker-head">
        <h2 id="library-title">Add a rule from the library</h2>
        <button type="button" onClick={onClose}>Close</button>
      </div>
      <p class="muted">A built-in check is added at its default score; change its score, mode or thresholds in the draft afterwards.</p>
      {library.loading && !library.data ? <Loading what="the library" /> : null}
      <ProblemMessage problem={library.error ?? add.error} />
      {library.data
        ? groups.map((group) => (
          <table key={group.title} class="library">
            <caption>{group.title}</caption>
            <thead><tr><th scope="col">Rule</th><th scope="col">What it means</th><th scope="col" class="num">Default score</th><th scope="col"><span class="visually-hidden">Add</span></th></tr></thead>
            <tbody>
              {group.rules.map((rule) => (
                <tr key={rule.id}>
                  <td><strong>{rule.name}</strong><br /><code>{rule.id}</code></td>
                  <td>{rule.description}<small class="muted block">Reads <code>{rule.reads}</code></small></td>
                  <td class="num">{rule.default_score}</td>
                  <td class="row-actions">
                    {present.includes(rule.id)
                      ? <span class="muted">in the draft</span>
                      : <button type="button" onClick={() => void add.run(rule)} disabled={add.busy} aria-label={`Add ${rule.id}`}>Add</button>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ))
        : null}
    </section>
  );
}
