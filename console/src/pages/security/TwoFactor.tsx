import { useState } from 'preact/hooks';
import { api, ok, type Answered } from '../../api/client';
import { CopyButton, Field, Page, ProblemMessage } from '../../components/ui';
import { useAction } from '../../hooks';
import { useSession } from '../../session';

type Enrolment = Answered<'startTotp'>;

/**
 * Two-factor for the signed-in user: set up a TOTP authenticator (a QR code the service draws, or
 * the secret to type), confirm it with a code, and save the recovery codes shown this once. Turning
 * it off is an instance owner's reset (Users), so a stolen session cannot.
 */
export function TwoFactor() {
  const { session, refresh } = useSession();
  const [enrolment, setEnrolment] = useState<Enrolment | undefined>();
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState<string[] | undefined>();
  const start = useAction(async () => setEnrolment(await ok(api.POST('/admin/v1/session/totp'))));
  const confirm = useAction(async () => {
    const answer = await ok(api.PUT('/admin/v1/session/totp', { body: { code } }));
    setRecovery(answer.recovery_codes);
    setEnrolment(undefined);
  });
  const on = session.user?.two_factor === true;

  return (
    <Page title="Two-factor" intro="With two-factor on, logging in needs a code from an authenticator app on your phone as well as your password.">
      {recovery ? (
        <section class="card" aria-labelledby="recovery">
          <h2 id="recovery">Two-factor is on: save your recovery codes</h2>
          <p>Each code logs you in once without the phone. They are shown this once: keep them somewhere safe, away from the password.</p>
          <ul class="recovery-codes mono" aria-label="Recovery codes">{recovery.map((c) => <li key={c}>{c}</li>)}</ul>
          <div class="actions">
            <CopyButton text={recovery.join('\n')} label="Copy codes" />
            <button type="button" class="primary" onClick={() => { setRecovery(undefined); void refresh(); }}>I saved them</button>
          </div>
        </section>
      ) : on ? (
        <section class="card"><p>Two-factor is <strong>on</strong> for {session.user?.email}. Lost the phone? An instance owner can reset it from Users; then set it up again here.</p></section>
      ) : enrolment ? (
        <section class="card" aria-labelledby="scan">
          <h2 id="scan">Scan the code with your authenticator app</h2>
          <img class="qr" src={enrolment.qr_code} alt="QR code for the authenticator app" width={200} height={200} />
          <p>Or type this key: <code class="mono" aria-label="Secret key">{enrolment.secret}</code> (time-based, {enrolment.digits} digits, every {enrolment.period_seconds} seconds).</p>
          <form onSubmit={(e) => { e.preventDefault(); void confirm.run(); }}>
            <Field label="Code from the app" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required value={code} onInput={(e) => setCode(e.currentTarget.value)} error={confirm.error?.field('code')} />
            <ProblemMessage problem={confirm.error?.errors.length ? undefined : confirm.error} />
            <button type="submit" class="primary" disabled={confirm.busy}>Turn on two-factor</button>
          </form>
        </section>
      ) : (
        <section class="card">
          <p>Two-factor is <strong>off</strong> for {session.user?.email ?? 'this token'}.</p>
          <ProblemMessage problem={start.error} />
          {session.user ? <button type="button" class="primary" onClick={() => void start.run()} disabled={start.busy}>Set up two-factor</button> : null}
        </section>
      )}
    </Page>
  );
}
