import { createContext, type ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { useResource } from '../../hooks';
import { useSession } from '../../session';

/**
 * Versions name their author as `user:usr_…`, `token:tok_…`, `cli:…` or `system`. A user is shown
 * by e-mail address where the caller may know it: themself, and for admins the account's members
 * (an analyst cannot list members, so sees the id).
 */
const Names = createContext<Map<string, string>>(new Map());

export function AuthorNames({ children }: { children: ComponentChildren }) {
  const { account, role, session } = useSession();
  const members = useResource(
    () => (role === 'admin' ? ok(api.GET('/admin/v1/accounts/{account}/members', { params: { path: { account: account! } } })) : Promise.resolve({ users: [] })),
    [account, role],
  );
  const names = new Map((members.data?.users ?? []).map((u) => [`user:${u.id}`, u.email]));
  if (session.user) names.set(`user:${session.user.id}`, session.user.email);
  return <Names.Provider value={names}>{children}</Names.Provider>;
}

export function Author({ id }: { id: string }) {
  const name = useContext(Names).get(id);
  return name ? <span title={id}>{name}</span> : <span class="mono">{id}</span>;
}
