// The shell: checks the session, shows sign-in or the signed-in layout (skip link, header with the actor
// and sign-out, nav, one page in main). A 401 from any call comes back here and shows sign-in.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, messageOf, setCsrfToken, setUnauthorizedHandler } from './api.ts';
import { ErrorNote, Loading } from './components.tsx';
import { PAGES } from './pages.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { navigate, useRoute } from './router.ts';
import { SessionContext } from './session.ts';
import type { SessionJson } from './types.ts';

const SESSION_URL = './api/session';

export function App() {
  // undefined: still asking the server; null: signed out.
  const [session, setSession] = useState<SessionJson | null | undefined>(undefined);
  const [startError, setStartError] = useState<string | undefined>(undefined);
  const route = useRoute();
  const afterSignIn = useRef('overview');

  const signedIn = (next: SessionJson | null) => {
    setCsrfToken(next?.csrf_token ?? '');
    setSession(next);
  };

  // Signing out on purpose starts the next session on the overview; a 401 returns to the page it interrupted.
  const signedOut = () => {
    navigate('sign-in');
    signedIn(null);
  };

  useEffect(() => {
    setUnauthorizedHandler(() => signedIn(null));
    api<SessionJson>(SESSION_URL, { ignoreUnauthorized: true })
      .then(signedIn)
      .catch((error: unknown) => {
        signedIn(null);
        if (!(error instanceof ApiError && error.status === 401)) setStartError(messageOf(error));
      });
  }, []);

  // At the session's expiry, ask the server again: its 401 brings sign-in without waiting for a click.
  useEffect(() => {
    if (!session) return;
    const timer = setTimeout(() => void api(SESSION_URL).catch(() => {}), Math.min(Math.max(session.expires_at - Date.now() + 1000, 1000), 2 ** 31 - 1));
    return () => clearTimeout(timer);
  }, [session]);

  // Signed out: remember where the user was going, show #/sign-in; signed in: leave #/sign-in.
  useEffect(() => {
    if (session === null && route.page !== 'sign-in') {
      afterSignIn.current = window.location.hash.replace(/^#\/?/, '') || 'overview';
      navigate('sign-in');
    } else if (session && route.page === 'sign-in') navigate(afterSignIn.current === 'sign-in' ? 'overview' : afterSignIn.current);
  }, [session, route.page]);

  if (session === undefined) return <Loading what="the console" />;
  if (session === null)
    return (
      <>
        <ErrorNote error={startError} />
        <SignInPage onSignedIn={signedIn} />
      </>
    );
  return (
    <SessionContext.Provider value={session}>
      <Layout session={session} page={route.page} id={route.id} onSignedOut={signedOut} />
    </SessionContext.Provider>
  );
}

function Layout({ session, page, id, onSignedOut }: { session: SessionJson; page: string; id: string | undefined; onSignedOut: () => void }) {
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  const [signOutError, setSignOutError] = useState<string | undefined>(undefined);
  const entry = PAGES.find((p) => p.path === page);

  // A new page moves focus to main (a screen reader then reads its h1), not on the first load.
  useEffect(() => {
    if (first.current) first.current = false;
    else main.current?.focus();
  }, [page, id]);

  const signOut = async () => {
    try {
      await api(SESSION_URL, { method: 'DELETE' });
      onSignedOut();
    } catch (error) {
      setSignOutError(messageOf(error));
    }
  };
  const skip = (event: Event) => {
    // The hash is the router's: move focus instead of following #main.
    event.preventDefault();
    main.current?.focus();
  };
  const Page = entry?.component;
  return (
    <>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link (it works without the script); the handler keeps the router's hash */}
      <a class="skip-link" href="#main" onClick={skip}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Herd console</span>
        <span class="who">
          Signed in as <strong>{session.actor.name}</strong> <span class="badge plain">{session.actor.role}</span>
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <ErrorNote error={signOutError} />
      <nav class="side" aria-label="Console">
        <ul>
          {PAGES.map((p) => (
            <li key={p.path}>
              <a href={`#/${p.path}`} aria-current={p.path === page ? 'page' : undefined}>
                {p.name}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" ref={main} tabIndex={-1}>
        {Page ? (
          <Page id={id} />
        ) : (
          <>
            <h1>Page not found</h1>
            <p>
              There is no page <code>#/{page}</code>. <a href="#/overview">Go to the overview</a>.
            </p>
          </>
        )}
      </main>
    </>
  );
}
