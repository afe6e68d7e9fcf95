import { useState } from 'preact/hooks';
import { api, ok, type Answered } from '../../api/client';
import { Confirm, CopyButton, Field, Loading, Page, ProblemMessage, Time } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import { useSession, type Role } from '../../session';

type Member = Answered<'listMembers'>['users'][number];
type User = Answered<'listUsers'>['users'][number];

/**
 * The account's members and their roles (its admins manage them); for instance owners, every
 * console user as well. A new user gets a one-time password, shown once, to change at first login.
 */
export function Users() {
  const { account, owner } = useSession();
  return (
    <Page title="Users" intro="Admins do everything in the account; analysts work on decisions, labels and lists, and read rules and the key list.">
      {account ? <Members account={account} /> : null}
      {owner ? <AllUsers /> : null}
    </Page>
  );
}

const roleIn = (user: Member, account: string) => user.memberships.find((m) => m.account_id === account)?.role;

function OneTimePassword({ email, password }: { email: string; password: string }) {
  return (
    <div class="new-key" role="region" aria-label="One-time password shown once">
      <p>One-time password for <strong>{email}</strong>, shown this once: give it to them over a safe channel. They choose their own at first login.</p>
      <div class="key-row"><code class="mono">{password}</code> <CopyButton text={password} label="Copy password" /></div>
    </div>
  );
}

function Members({ account }: { account: string }) {
  const { session } = useSession();
  const members = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/members', { params: { path: { account } } })), [account]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('analyst');
  const [made, setMade] = useState<{ email: string; password: string } | undefined>();
  const [removing, setRemoving] = useState<Member | undefined>();
  const add = useAction(async () => {
    const answer = await ok(api.POST('/admin/v1/accounts/{account}/members', { params: { path: { account } }, body: { email, role } }));
    setMade(answer.one_time_password ? { email: answer.user.email, password: answer.one_time_password } : undefined);
    setEmail('');
    members.reload();
  });
  const setRoleOf = useAction(async (user: Member, next: Role) => {
    await ok(api.PUT('/admin/v1/accounts/{account}/members/{user_id}', { params: { path: { account, user_id: user.id } }, body: { role: next } }));
    members.reload();
  });
  const remove = useAction(async (user: Member) => {
    await ok(api.DELETE('/admin/v1/accounts/{account}/members/{user_id}', { params: { path: { account, user_id: user.id } } }));
    setRemoving(undefined);
    members.reload();
  });

  return (
    <section class="card" aria-labelledby="members">
      <h2 id="members">Members of {account}</h2>
      {members.loading && !members.data ? <Loading what="members" /> : null}
      <ProblemMessage problem={members.error ?? setRoleOf.error} />
      {members.data ? (
        <table>
          <thead><tr><th scope="col">E-mail address</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {members.data.users.map((u) => (
              <tr key={u.id}>
                <td>{u.email}{u.id === session.user?.id ? <span class="muted"> (you)</span> : null}</td>
                <td>
                  <label class="visually-hidden" for={`role-${u.id}`}>Role of {u.email}</label>
                  <select id={`role-${u.id}`} value={roleIn(u, account)} onChange={(e) => void setRoleOf.run(u, e.currentTarget.value as Role)}>
                    <option value="admin">admin</option>
                    <option value="analyst">analyst</option>
                  </select>
                </td>
                <td>{u.status}{u.password_change_required ? <span class="muted">, one-time password not yet changed</span> : null}</td>
                <td><Time at={u.created_at} /></td>
                <td class="row-actions"><button type="button" class="danger" onClick={() => setRemoving(u)} aria-label={`Remove ${u.email}`}>Remove</button></td>
              </tr>
            ))}
            {members.data.users.length === 0 ? <tr><td colSpan={5} class="muted">No member yet: add one below.</td></tr> : null}
          </tbody>
        </table>
      ) : null}
      <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void add.run(); }}>
        <h3>Add a member</h3>
        <Field label="E-mail address" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} error={add.error?.field('email')} />
        <div class="field">
          <label for="new-member-role">Role</label>
          <select id="new-member-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            <option value="analyst">analyst</option>
            <option value="admin">admin</option>
          </select>
        </div>
        <button type="submit" class="primary" disabled={add.busy}>Add member</button>
      </form>
      <ProblemMessage problem={add.error?.errors.length ? undefined : add.error} />
      {made ? <OneTimePassword email={made.email} password={made.password} /> : null}
      {removing ? (
        <Confirm title={`Remove ${removing.email} from ${account}?`} action="Remove member" busy={remove.busy} problem={remove.error}
          onCancel={() => setRemoving(undefined)} onConfirm={() => void remove.run(removing)}>
          <p>They lose access to this account's keys, rules and decisions from their next request. Their user and other accounts stay. Admin tokens they made keep working: revoke those separately.</p>
        </Confirm>
      ) : null}
    </section>
  );
}

function AllUsers() {
  const { session } = useSession();
  const users = useResource(() => ok(api.GET('/admin/v1/users')), []);
  const [reset, setReset] = useState<{ email: string; password: string } | undefined>();
  const [resettingTotp, setResettingTotp] = useState<User | undefined>();
  const resetTotp = useAction(async (user: User) => {
    await ok(api.DELETE('/admin/v1/users/{user_id}/totp', { params: { path: { user_id: user.id } } }));
    setResettingTotp(undefined);
    users.reload();
  });
  const update = useAction(async (user: User, body: { status?: 'active' | 'disabled'; owner?: boolean; two_factor_required?: boolean }) => {
    await ok(api.PATCH('/admin/v1/users/{user_id}', { params: { path: { user_id: user.id } }, body }));
    users.reload();
  });
  const resetPassword = useAction(async (user: User) => {
    const answer = await ok(api.POST('/admin/v1/users/{user_id}/password-reset', { params: { path: { user_id: user.id } } }));
    setReset({ email: user.email, password: answer.one_time_password });
  });
  return (
    <section class="card" aria-labelledby="all-users">
      <h2 id="all-users">Every user of this instance</h2>
      <p class="muted">Only instance owners see this list. Disabling a user ends their sessions at once.</p>
      <ProblemMessage problem={users.error ?? update.error ?? resetPassword.error} />
      {users.data ? (
        <table>
          <thead><tr><th scope="col">E-mail address</th><th scope="col">Owner</th><th scope="col">Status</th><th scope="col">Two-factor</th><th scope="col">Accounts</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {users.data.users.map((u) => (
              <tr key={u.id}>
                <td>{u.email}</td>
                <td>{u.owner ? 'yes' : 'no'}</td>
                <td>{u.status}</td>
                <td>{u.two_factor ? 'on' : 'off'}{u.two_factor_required ? <span class="muted">, required</span> : null}</td>
                <td>{u.memberships.map((m) => `${m.account_id} (${m.role})`).join(', ') || <span class="muted">none</span>}</td>
                <td class="row-actions wrap">
                  {u.id === session.user?.id ? <span class="muted">you</span> : (
                    <>
                      <button type="button" onClick={() => void update.run(u, { status: u.status === 'active' ? 'disabled' : 'active' })}>{u.status === 'active' ? 'Disable' : 'Enable'}</button>
                      <button type="button" onClick={() => void resetPassword.run(u)}>Reset password</button>
                      <button type="button" onClick={() => void update.run(u, { two_factor_required: !u.two_factor_required })} aria-label={`${u.two_factor_required ? 'Stop requiring' : 'Require'} two-factor of ${u.email}`}>{u.two_factor_required ? 'Stop requiring two-factor' : 'Require two-factor'}</button>
                      {u.two_factor ? <button type="button" class="danger" onClick={() => setResettingTotp(u)} aria-label={`Reset two-factor of ${u.email}`}>Reset two-factor</button> : null}
                    </>
                  )}
                </td>
              </tr>
            ))}
            {users.data.users.length === 0 ? <tr><td colSpan={6} class="muted">No user.</td></tr> : null}
          </tbody>
        </table>
      ) : <Loading what="users" />}
      {reset ? <OneTimePassword email={reset.email} password={reset.password} /> : null}
      {resettingTotp ? (
        <Confirm title={`Reset two-factor of ${resettingTotp.email}?`} action="Reset two-factor" busy={resetTotp.busy} problem={resetTotp.error}
          onCancel={() => setResettingTotp(undefined)} onConfirm={() => void resetTotp.run(resettingTotp)}>
          <p>Their authenticator and recovery codes are removed and their sessions end. They log in with the password alone and set up two-factor again{resettingTotp.two_factor_required ? ' (required of them: nothing else until they do)' : ''}. The audit log keeps who did it.</p>
        </Confirm>
      ) : null}
    </section>
  );
}
