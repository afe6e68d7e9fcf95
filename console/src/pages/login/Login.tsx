import { useState } from 'preact/hooks';
import { api, ApiProblem, ok } from '../../api/client';
import { Field, ProblemMessage } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import type { SessionInfo } from '../../session';

/**
 * Why a single sign-on came back without a session: the service redirects to
 * `/console/?sign_in_error=<reason>` (src/admin/routes/sign-in.ts), and this says it in words.
 */
const SIGN_IN_ERRORS: Record<string, (provider: string) => string> = {
  sign_in_expired: () => 'The sign-in took longer than ten minutes, or was started in another browser or tab. Try again.',
  provider_refused: (p) => `${p} did not sign you in: the sign-in was cancelled, or its link was used twice. Try again.`,
  invalid_token: (p) => `The answer from ${p} failed a security check (issuer, signature, expiry or nonce), so you were not signed in. Try again; if it keeps happening, tell an instance owner: the service's log says which check failed.`,
  email_missing: (p) => `${p} did not give a verified e-mail address for you. Ask an instance owner.`,
  unknown_user: (p) => `${p} signed you in, but no console user has that e-mail address (or the user is disabled). Ask an instance owner to add you.`,
  provider_unavailable: (p) => `${p} could not be reached, or is not set up the way this service expects. Try again later, or tell an instance owner.`,
};

/** The reason in the URL, read once: the URL is cleaned so a reload does not show it again. */
function takeSignInError(): string | undefined {
  const reason = new URLSearchParams(location.search).get('sign_in_error') ?? undefined;
  if (reason !== undefined) history.replaceState(null, '', location.pathname + location.hash);
  return reason;
}

/**
 * Log in with an e-mail address and a password; the answer carries the session's CSRF token. For a
 * user with two-factor on, the service answers `second_factor_required` to the right password: the
 * form then asks for the authenticator's code (or a recovery code) and sends all three again.
 */
export function Login({ onSession }: { onSession: (session: SessionInfo) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [secondFactor, setSecondFactor] = useState<'totp' | 'recovery' | undefined>();
  const [code, setCode] = useState('');
  const login = useAction(async () => {
    const body = { email, password, ...(secondFactor === 'totp' ? { totp_code: code } : secondFactor === 'recovery' ? { recovery_code: code } : {}) };
    try {
      onSession(await ok(api.POST('/admin/v1/session', { body }), { loginAttempt: true }));
    } catch (error) {
      if (error instanceof ApiProblem && error.code === 'second_factor_required' && secondFactor === undefined) {
        setSecondFactor('totp');
        return;
      }
      throw error;
    }
  });
  const codeError = login.error?.code === 'second_factor_required' ? undefined : login.error;
  const options = useResource(() => ok(api.GET('/admin/v1/sign-in')), []);
  const [signInError] = useState(takeSignInError);
  const sso = options.data?.single_sign_on ?? null;
  // Passwords are shown until the service says they are off (PASSWORD_LOGIN=false).
  const passwordForm = options.data?.password === false ? null : (
      <form onSubmit={(e) => { e.preventDefault(); void login.run(); }}>
        <Field label="E-mail address" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} error={login.error?.field('email')} />
        <Field label="Password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} error={login.error?.field('password')} />
        {secondFactor === 'totp' ? (
          <>
            <Field label="Code from your authenticator app" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required autoFocus value={code} onInput={(e) => setCode(e.currentTarget.value)} hint="Six digits; a new one every 30 seconds." />
            <p><button type="button" onClick={() => { setSecondFactor('recovery'); setCode(''); }}>Use a recovery code instead</button></p>
          </>
        ) : secondFactor === 'recovery' ? (
          <Field label="Recovery code" autocomplete="off" required autoFocus value={code} onInput={(e) => setCode(e.currentTarget.value)} hint="One of the codes saved when two-factor was set up; each works once." />
        ) : null}
        <ProblemMessage problem={codeError} />
        <button type="submit" class="primary" disabled={login.busy}>Log in</button>
      </form>
  );
  const ssoName = sso?.name ?? 'single sign-on';
  return (
    <main class="narrow" id="main">
      <h1>Log in to the risk console</h1>
      {signInError !== undefined ? (
        <div class="problem" role="alert">
          <strong>You are not signed in.</strong> {(SIGN_IN_ERRORS[signInError] ?? SIGN_IN_ERRORS.provider_refused!)(ssoName)}
        </div>
      ) : null}
      <ProblemMessage problem={options.error} />
      {sso ? <p><a class="button-link primary" href={sso.url}>Sign in with {sso.name}</a></p> : null}
      {passwordForm}
      <p class="muted">No account yet? An operator makes one with <code>npm run admin -- create</code>{sso ? `; then sign in with ${sso.name}` : null}.</p>
    </main>
  );
}

/** The first owner of a fresh install, from the one-time link a development start printed. */
export function Setup({ token, onSession }: { token: string; onSession: (session: SessionInfo) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const setup = useAction(async () => {
    const session = await ok(api.POST('/admin/v1/setup', { body: { token, email, password } }), { loginAttempt: true });
    history.replaceState(null, '', location.pathname);
    onSession(session);
  });
  return (
    <main class="narrow" id="main">
      <h1>Create the first owner</h1>
      <p>This one-time link makes the instance's first owner. It works once, for 24 hours, while no user exists.</p>
      <form onSubmit={(e) => { e.preventDefault(); void setup.run(); }}>
        <Field label="E-mail address" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} error={setup.error?.field('email')} />
        <Field label="Password" type="password" autocomplete="new-password" required minLength={12} hint="12 to 256 characters, not your e-mail address." value={password} onInput={(e) => setPassword(e.currentTarget.value)} error={setup.error?.field('password')} />
        <ProblemMessage problem={setup.error} />
        <button type="submit" class="primary" disabled={setup.busy}>Create owner and log in</button>
      </form>
    </main>
  );
}

/** A one-time password allows nothing else until it is changed. */
export function ChangePassword({ onChanged, onLogout }: { onChanged: () => void; onLogout: () => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const change = useAction(async () => {
    await ok(api.PUT('/admin/v1/session/password', { body: { current_password: current, new_password: next } }));
    onChanged();
  });
  return (
    <main class="narrow" id="main">
      <h1>Choose your password</h1>
      <p>You logged in with a one-time password. Choose your own to continue.</p>
      <form onSubmit={(e) => { e.preventDefault(); void change.run(); }}>
        <Field label="One-time password" type="password" autocomplete="current-password" required value={current} onInput={(e) => setCurrent(e.currentTarget.value)} error={change.error?.field('current_password')} />
        <Field label="New password" type="password" autocomplete="new-password" required minLength={12} hint="12 to 256 characters, not your e-mail address." value={next} onInput={(e) => setNext(e.currentTarget.value)} error={change.error?.field('new_password')} />
        <ProblemMessage problem={change.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={change.busy}>Save password</button>
          <button type="button" onClick={onLogout}>Log out</button>
        </div>
      </form>
    </main>
  );
}
