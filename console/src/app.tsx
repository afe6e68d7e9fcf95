import type { ComponentType } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, ok, useSessionToken } from './api/client';
import { focusMainHeading, headingWanted, Loading, ProblemMessage, sameControl } from './components/ui';
import { asProblem } from './hooks';
import { Audit } from './pages/audit/Audit';
import { ChangePassword, Login, Setup } from './pages/login/Login';
import { Decisions } from './pages/decisions/Decisions';
import { Entity } from './pages/entity/Entity';
import { Review, ReviewCounts } from './pages/review/Review';
import { Lists } from './pages/lists/Lists';
import { ThreatRules } from './pages/rules/ThreatRules';
import { TwoFactor } from './pages/security/TwoFactor';
import { Sources } from './pages/sources/Sources';
import { GettingStarted } from './pages/start/GettingStarted';
import { Users } from './pages/users/Users';
import { Webhooks } from './pages/webhooks/Webhooks';
import { href, navigate, useRoute } from './router';
import { Session, type Role, type SessionInfo } from './session';

interface Section {
  page: string;
  title: string;
  component: ComponentType<{ rest: string[] }>;
  /** Shown only to this role in the account (admins see everything). */
  role?: Role;
  /** Reached by links only (an entity's page), not listed in the navigation. */
  hidden?: boolean;
}

export const SECTIONS: Section[] = [
  { page: 'start', title: 'Getting started', component: GettingStarted },
  { page: 'decisions', title: 'Decisions', component: Decisions },
  { page: 'review', title: 'Review', component: Review },
  { page: 'entity', title: 'Entity', component: Entity, hidden: true },
  { page: 'rules', title: 'Threat rules', component: ThreatRules },
  { page: 'lists', title: 'Lists', component: Lists },
  { page: 'users', title: 'Users', component: Users, role: 'admin' },
  { page: 'sources', title: 'Data sources', component: Sources },
  { page: 'audit', title: 'Audit log', component: Audit, role: 'admin' },
  { page: 'two-factor', title: 'Two-factor', component: TwoFactor },
  { page: 'webhooks', title: 'Webhooks', component: Webhooks, role: 'admin' },
];

type State = { kind: 'loading' } | { kind: 'anonymous' } | { kind: 'signed-in'; session: SessionInfo } | { kind: 'unreachable'; error: ReturnType<typeof asProblem> };

export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const load = async () => {
    try {
      setState({ kind: 'signed-in', session: await ok(api.GET('/admin/v1/session'), { loginAttempt: true }) });
    } catch (error) {
      const problem = asProblem(error);
      setState(problem.status === 401 ? { kind: 'anonymous' } : { kind: 'unreachable', error: problem });
    }
  };
  useEffect(() => void load(), []);

  const session = state.kind === 'signed-in' ? state.session : undefined;
  useSessionToken(session?.csrf_token ?? null, () => setState({ kind: 'anonymous' }));
  const signedIn = (next: SessionInfo) => setState({ kind: 'signed-in', session: next });
  const logout = async () => {
    await ok(api.DELETE('/admin/v1/session')).catch(() => undefined);
    setState({ kind: 'anonymous' });
  };

  if (state.kind === 'loading') return <main id="main" class="narrow"><Loading what="the console" /></main>;
  if (state.kind === 'unreachable') {
    return (
      <main id="main" class="narrow">
        <h1>Risk console</h1>
        <ProblemMessage problem={state.error} />
        <button type="button" onClick={() => void load()}>Try again</button>
      </main>
    );
  }
  if (state.kind === 'anonymous') {
    const setup = /^#setup=([\w-]+)$/.exec(location.hash);
    return setup ? <Setup token={setup[1]!} onSession={signedIn} /> : <Login onSession={signedIn} />;
  }
  if (state.session.user?.password_change_required) return <ChangePassword onChanged={() => void load()} onLogout={() => void logout()} />;
  if (state.session.user?.two_factor_setup_required) {
    // TWO_FACTOR_REQUIRED: nothing else until an authenticator is set up.
    return (
      <Session.Provider value={{ session: state.session, account: undefined, role: undefined, owner: false, refresh: load }}>
        <main class="narrow" id="main">
          <p>This instance requires two-factor for every user: set it up to continue.</p>
          <TwoFactor />
          <button type="button" onClick={() => void logout()}>Log out</button>
        </main>
      </Session.Provider>
    );
  }
  return <Shell session={state.session} onLogout={() => void logout()} refresh={load} />;
}

function Shell({ session, onLogout, refresh }: { session: SessionInfo; onLogout: () => void; refresh: () => Promise<void> }) {
  const route = useRoute();
  const owner = session.user?.owner ?? false;
  const known = session.accounts.find((a) => a.id === route.account);
  const account = known ?? session.accounts[0];
  useLayoutEffect(() => {
    // An unknown or missing account in the URL: show the first one the caller has. Before the first
    // paint (a layout effect: Preact 11 runs a plain one after it), so that the address bar never
    // names another page than the one shown; in place of the address without it, which Back would
    // otherwise land on and be sent forward from again.
    if (!known && account) navigate(href(account.id, route.page), { replace: true });
  }, [known, account, route.page]);

  const role = account?.role;
  const sections = SECTIONS.filter((s) => s.role === undefined || role === 'admin');
  const section = sections.find((s) => s.page === route.page) ?? sections[0]!;
  const Component = section.component;
  useEffect(() => {
    document.title = `${section.title} · Risk console`;
  }, [section.title]);
  // A new page (not a new search on the same one: `?filters`) takes focus to its main heading, as
  // a page load would start a screen reader there; a page still loading takes it when it shows.
  const place = [account?.id, section.page, ...route.rest.filter((part) => !part.startsWith('?'))].join('/');
  const shownPlace = useRef(place);
  useEffect(() => {
    if (shownPlace.current === place) return;
    shownPlace.current = place;
    headingWanted.value = !focusMainHeading();
  }, [place]);
  // A focused control that goes away (the draft discarded, its bar with it) would leave focus on
  // <body>, back at the top of the page: the same control rendered again takes it back, else the
  // main heading, once whatever gives focus back on its own (a dialog to its opener) has had its turn.
  useEffect(() => {
    const lost = (event: FocusEvent) => {
      const left = event.target;
      if (event.relatedTarget !== null || !(left instanceof Node)) return;
      setTimeout(() => {
        if (left.isConnected || (document.activeElement !== document.body && document.activeElement !== null)) return;
        // A dialog's control is not looked for: its opener takes focus back (useReturnFocus), and
        // its "Cancel" could match another on the page.
        const again = left instanceof HTMLElement && left.closest('dialog') === null ? sameControl(left) : undefined;
        again?.focus();
        if (again === undefined || document.activeElement !== again) headingWanted.value = !focusMainHeading();
      }, 100);
    };
    document.addEventListener('focusout', lost);
    return () => document.removeEventListener('focusout', lost);
  }, []);

  return (
    <Session.Provider value={{ session, account: account?.id, role, owner, refresh }}>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
      <header class="top">
        <span class="brand">Risk console</span>
        {session.accounts.length > 0 ? (
          <label class="switcher">
            Account{' '}
            <select value={account?.id} onChange={(e) => navigate(href(e.currentTarget.value, route.page))}>
              {session.accounts.map((a) => (
                <option key={a.id} value={a.id}>{a.name === a.id ? a.id : `${a.name} (${a.id})`}</option>
              ))}
            </select>
          </label>
        ) : null}
        <span class="who">
          {session.user?.email ?? session.token?.name} <span class="badge">{owner ? 'owner' : role ?? 'no account'}</span>
        </span>
        <button type="button" onClick={onLogout}>Log out</button>
      </header>
      <div class="layout">
        <nav aria-label="Sections">
          <ul>
            {sections.filter((s) => !s.hidden).map((s) => (
              <li key={s.page}>
                <a href={href(account?.id ?? '', s.page)} aria-current={s === section ? 'page' : undefined}>{s.title}{s.page === 'review' && account ? <ReviewCounts place={place} /> : null}</a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          <Component key={`${account?.id}/${section.page}`} rest={route.rest} />
        </main>
      </div>
    </Session.Provider>
  );
}
